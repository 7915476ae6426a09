"""How true are the drafts a real small model writes? The corpus (tests/corpus) night after night through this
service and through the earlier release 5.4.0, the same real SerenMemory, the same real llama-server and
model, at temperature 0 with a fixed seed; scored against the corpus's ground truth (tests/harness/nights.py,
tests/harness/truth.py). One table.

Per night: operations Memory holds (proposed and schema-valid: what reaches Memory went through the answer's
schema), grounded (every specific in its fragments or its target core), what the service says its guard
dropped and why, invented specifics that reached Memory, the correction superseded (the right core), the
attach made, noise kept out, promoted topics covered, duplicates, model calls, prompt and answer tokens (the
server's --metrics), wall. The reviewer (scripted) approves the grounded operations that cite no noise and
denies the rest; `sleep.max_attempts: 1` ends each chain there, so no redraft runs.

    python tests/bench/bench_quality.py [--models smollm2,gemma3] [--modes free,extractive] [--nights 5]
                                        [--slice] [--old /path/to/5.4.0/venv | --no-old] [--seed 7]

`--modes`: model.write, where this build has it (issue 39's extractive mode); before it lands only `free` runs
and the table says so. `--old`: a throwaway venv outside the project holding seren-hippocampus==5.4.0
(made with `pip download seren-hippocampus==5.4.0` and installed from that file); it runs as a process with
`sleep.flow: all`, its code never read. Default: $SEREN_OLD_HIPPOCAMPUS_VENV, else /tmp/seren-hippocampus-5.4.0.
`--slice`: the short nights the real-model tests feed. Needs the built llama-server and the real models
(python -m tests.harness.llama_build; python -m tests.harness.real_models); says why and exits 2 otherwise.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from _common import MemoryProc, OldService, Proxy, ServiceProc, banner, old_missing, old_venv, tmpdir
from tests.corpus import load, seed_cores
from tests.harness import llama_server, nights, real_models
from tests.harness.llama_server import LlamaServer
from tests.harness.memory_client import ReviewingClient
from tests.harness.reviewer import MemoryHand


def arg(name: str, default: str) -> str:
    for i, a in enumerate(sys.argv):
        if a == name and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


MODELS = arg("--models", "smollm2,gemma3").split(",")
MODES = [m for m in arg("--modes", "free,extractive").split(",") if m and m != "none"]   # none: 5.4.0 only
NIGHTS = int(arg("--nights", "5"))
SEED = int(arg("--seed", "7"))
SLICE = "--slice" in sys.argv
OLD = old_venv()
MAX_TOKENS = 512


def has_write_mode() -> bool:
    from hippocampus.config.schema import ModelConfig
    return "write" in ModelConfig.__dataclass_fields__


def model_block(url: str, mode: str) -> dict:
    block = {"url": url, "name": "bench", "max_tokens": MAX_TOKENS, "temperature": 0, "timeout_seconds": 600,
             "structured": "on", "extra_body": {"seed": SEED, "chat_template_kwargs": {"enable_thinking": False}}}
    if has_write_mode():
        block["write"] = mode
    return block


SLEEP = {"mode": "external", "promote_min_evidence": 2, "max_attempts": 1, "brief_request": False}


def calls_through(proxy: Proxy, since: int) -> int:
    """Chat calls the service made through the counting proxy since the index `since`."""
    with proxy.lock:
        return sum(1 for _, data in proxy.sent[since:] if data.startswith(b"POST ") and b"chat/completions" in data)


def run_impl(label: str, make_service, mem: MemoryProc, llama: LlamaServer, work: Path) -> list:
    """N nights of the corpus through one implementation, on a fresh store; the scores."""
    mem.fresh()
    corpus = load()
    hand, client = MemoryHand(mem.url), ReviewingClient(mem.url, timeout=60)
    core_ids = seed_cores(client, hand, corpus)
    proxy = Proxy(llama.url)
    svc = make_service(work / label, mem.url, proxy.url + "/v1")
    scores = []
    try:
        svc.start()
        ledger = nights.Ledger()
        for night in corpus.nights[:NIGHTS]:
            n = night.sliced() if SLICE else night
            mark = len(proxy.sent)
            s = nights.run_night(svc.url, hand, client, corpus, n, core_ids, ledger, time.time(),
                                 model_url=llama.url)
            s.model_calls = calls_through(proxy, mark)
            scores.append(s)
            print(f"  {label} {n.label}: {row(s)[2:]}", flush=True)
    finally:
        svc.stop()
        proxy.stop()
    return scores


HEAD = ("impl", "night", "ops", "grounded", "dropped", "invented", "corr", "attach", "noise out", "promoted",
        "dups", "calls", "tok in/out", "wall s", "error")


def row(s: nights.NightScore) -> tuple:
    dropped = ", ".join(f"{k}: {v}" for k, v in s.dropped.items()) or "-"
    inv = sum(len(x) for _, x in s.invented)
    return ("", s.label, s.proposed, s.grounded, dropped[:40], f"{len(s.invented)} ops/{inv}",
            "yes" if s.correction else ("WRONG" if s.correction_wrong else "no"),
            "-" if s.attach is None else ("yes" if s.attach else "no"), "no" if s.noise_in else "yes",
            f"{len(s.covered)}/{len(s.promoted)}", len(s.duplicates), s.model_calls,
            f"{s.tokens[0]}/{s.tokens[1]}" if s.tokens else "?", f"{s.seconds:.0f}", (s.error or "")[:50])


def print_table(results: dict) -> None:
    rows = [HEAD]
    for impl, scores in results.items():
        for s in scores:
            rows.append((impl,) + row(s)[1:])
        if scores:
            tot = lambda f: sum(f(s) for s in scores)  # noqa: E731
            rows.append((impl, "ALL", tot(lambda s: s.proposed), tot(lambda s: s.grounded), "",
                         f"{tot(lambda s: len(s.invented))} ops", f"{tot(lambda s: s.correction)}/{len(scores)}",
                         "", f"{sum(not s.noise_in for s in scores)}/{len(scores)}",
                         f"{tot(lambda s: len(s.covered))}/{tot(lambda s: len(s.promoted))}",
                         tot(lambda s: len(s.duplicates)), tot(lambda s: s.model_calls),
                         f"{tot(lambda s: (s.tokens or (0, 0))[0])}/{tot(lambda s: (s.tokens or (0, 0))[1])}",
                         f"{tot(lambda s: s.seconds):.0f}", f"{sum(bool(s.error) for s in scores)} failed"))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(HEAD))]
    print()
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))


def main() -> int:
    banner("quality of real small models' drafts: the corpus, ours beside 5.4.0")
    why = llama_server.unavailable() or next((real_models.unavailable(m) for m in MODELS
                                              if real_models.unavailable(m)), None)
    if why:
        print(f"cannot run: {why}")
        return 2
    modes = MODES if has_write_mode() else ["free"]
    if modes != MODES:
        print(f"model.write is not in this build: only {modes} runs (asked {MODES})")
    why_old = old_missing(OLD)
    old_ok = why_old is None
    if OLD is not None and not old_ok:
        print(why_old)
    work = tmpdir("hippo-quality-")
    mem = MemoryProc(work / "memory").start()
    results: dict = {}
    try:
        for name in MODELS:
            llama = LlamaServer(llama_server.binary(), real_models.path(name), "-c", "8192", "--seed", str(SEED),
                                "--metrics", threads=2, log_dir=work / f"llama-{name}").start(timeout=120)
            try:
                for mode in modes:
                    label = f"{name} ours {mode}"
                    results[label] = run_impl(label, lambda w, m, u, mode=mode: ServiceProc(
                        w, m, model=model_block(u, mode), sleep={**SLEEP, "state_path": str(w / "state.json")}),
                        mem, llama, work)
                if old_ok:
                    label = f"{name} 5.4.0"
                    results[label] = run_impl(label, lambda w, m, u: OldService(
                        w, m, OLD, model={k: v for k, v in model_block(u, "free").items()
                                          if k not in ("structured", "write")},
                        sleep={**SLEEP, "flow": "all", "state_path": str(w / "state.json")}), mem, llama, work)
            finally:
                llama.stop()
    finally:
        mem.stop()
    print_table(results)
    (work / "results.json").write_text(json.dumps({k: [vars(s) for s in v] for k, v in results.items()},
                                                  default=str, indent=1))
    print(f"\nevery operation and report: {work / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
