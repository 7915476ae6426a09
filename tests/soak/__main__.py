"""python -m tests.soak --nights 30 --faults: the long soak, by hand. Exits 1 on a violation."""
from __future__ import annotations

import argparse
import sys

from tests.soak.runner import run
from tests.soak.world import Options


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.soak")
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--ripple", choices=("script", "endpoint"), default="script")
    ap.add_argument("--nudge", choices=("http", "mcp"), default="http")
    ap.add_argument("--handover", choices=("on", "off"), default="on")
    ap.add_argument("--real-model", action="store_true",
                    help="the real llama-server on the tiny random-weight model instead of the stand-in")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--answer-seconds", type=float, default=1.5, help="the stand-in's generating time per answer")
    ap.add_argument("--dir", default=None, help="the world's folder (default: a new temporary one)")
    a = ap.parse_args(argv)
    opts = Options(nights=a.nights, faults=a.faults, ripple=a.ripple, nudge=a.nudge, handover=a.handover == "on",
                   real_model=a.real_model,
                   seed=a.seed, answer_seconds=a.answer_seconds, warmup_seconds=0.5, interval_seconds=5.0,
                   short_term_seconds=90, night_deadline_seconds=120.0)
    result = run(opts, a.dir)
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
