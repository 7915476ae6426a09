"""One mechanical sleep (no model) over 1,000 / 5,000 / 10,000 / 20,000 short-terms across 200 topics:
the service's CPU seconds and the wall time. Targets: 10,000 in <= 0.2 s of service CPU; 20,000 in
<= 2.2x the CPU of 10,000.

Memory is seeded straight through its store object in its own process (memory_helper.py), a fresh store
per size; sleep.max_entries_per_run is raised to 25,000. The sleep is POST /sleep on a brief (it answers
when the draft is in Memory). Memory's CPU over the same call is printed beside: the wall is mostly
Memory's (listing the short-terms, taking the draft).

    python tests/bench/bench_mechanical.py [--runs 3] [--sizes 1000,5000,10000,20000]
"""
from __future__ import annotations

import sys
import time

import requests

from _common import banner, MemoryProc, ServiceProc, median, runs_arg, table, tmpdir
from tests.harness.reviewer import MemoryHand

TOPICS = 200
TARGET_10K_CPU = 0.2
TARGET_SCALE = 2.2


def sizes_arg(default: list) -> list:
    for i, a in enumerate(sys.argv):
        if a == "--sizes":
            return [int(x) for x in sys.argv[i + 1].split(",")]
    return default


def one(mem: MemoryProc, work, n: int, tag: str) -> dict:
    mem.fresh()
    mem.seed(n, TOPICS)
    MemoryHand(mem.url).brief("a busy week")
    svc = ServiceProc(work / tag, mem.url, memory={"timeout_seconds": 900},
                      sleep={"max_entries_per_run": 25000}).start()
    try:
        time.sleep(0.5)
        c0, m0, t0 = svc.cpu(), mem.cpu(), time.monotonic()
        r = requests.post(svc.url + "/sleep", timeout=1800)
        wall = time.monotonic() - t0
        cpu, mcpu = svc.cpu() - c0, mem.cpu() - m0
        rep = r.json()
        assert r.status_code == 200 and rep.get("draft_id") and not rep.get("error"), rep
        return {"cpu": cpu, "wall": wall, "mem_cpu": mcpu, "ops": rep["operations"], "rss": svc.rss()}
    finally:
        svc.stop()


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, sizes = runs_arg(3), sizes_arg([1000, 5000, 10000, 20000])
    work = tmpdir("mech")
    mem = MemoryProc(work).start()
    res: dict = {n: [] for n in sizes}
    try:
        for i in range(runs):
            for n in sizes:
                r = one(mem, work, n, f"r{i}-{n}")
                res[n].append(r)
                print(f"  run {i + 1}, {n:>6} short-terms: service CPU {r['cpu']:.3f} s, wall {r['wall']:.2f} s, "
                      f"Memory CPU {r['mem_cpu']:.2f} s, {r['ops']} operations, RSS {r['rss']:.0f} MB", flush=True)
    finally:
        mem.stop()
    med = {n: {k: median([r[k] for r in rs]) for k in ("cpu", "wall", "mem_cpu", "rss")} for n, rs in res.items()}
    rows = []
    for n in sizes:
        m = med[n]
        target, ok = "(info)", None
        if n == 10000:
            target, ok = f"CPU <= {TARGET_10K_CPU} s", m["cpu"] <= TARGET_10K_CPU
        rows.append((f"{n:>6} short-terms: service CPU / wall / Memory CPU",
                     f"{m['cpu']:.3f} s / {m['wall']:.2f} s / {m['mem_cpu']:.2f} s", target, ok))
    if 10000 in med and 20000 in med:
        ratio = median([b["cpu"] / a["cpu"] for a, b in zip(res[10000], res[20000])])
        rows.append(("20,000 / 10,000 service CPU (per run, median)", f"{ratio:.2f}x", f"<= {TARGET_SCALE}x",
                     ratio <= TARGET_SCALE))
    table(f"one mechanical sleep over N short-terms across {TOPICS} topics, median of {runs}", rows)


if __name__ == "__main__":
    main()
