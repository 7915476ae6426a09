"""Start to the first 200 on GET /health: `python -m hippocampus` as a real subprocess (MCP installed,
so it is mounted), the real SerenMemory in another process. Target: <= 0.5 s (median of runs).

    python tests/bench/bench_startup.py [--runs 7]
"""
from __future__ import annotations

from _common import MemoryProc, ServiceProc, median, runs_arg, table, tmpdir

TARGET = 0.5


def main() -> None:
    runs = runs_arg(7)
    work = tmpdir("startup")
    mem = MemoryProc(work).start()
    try:
        ServiceProc(work / "warm", mem.url).start().stop()       # compile the bytecode once
        wall, cpu, rss = [], [], []
        for i in range(runs):
            svc = ServiceProc(work / f"run{i}", mem.url, sleep={"mode": "thread"}).start()
            wall.append(svc.startup_seconds)
            cpu.append(svc.cpu())
            rss.append(svc.rss())
            svc.stop()
            print(f"  run {i + 1}: {svc.startup_seconds:.3f} s to the first 200 (service CPU {cpu[-1]:.2f} s)",
                  flush=True)
    finally:
        mem.stop()
    table(f"start to first 200 on /health, median of {runs}", [
        ("start -> first 200 on /health", f"{median(wall):.3f} s", f"<= {TARGET} s", median(wall) <= TARGET),
        ("  service CPU by then", f"{median(cpu):.2f} s", "(info)", None),
        ("  resident memory by then", f"{median(rss):.1f} MB", "(info)", None),
        ("  fastest / slowest run", f"{min(wall):.3f} / {max(wall):.3f} s", "(info)", None),
    ])


if __name__ == "__main__":
    main()
