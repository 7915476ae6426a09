"""Start to the first 200 on GET /health: `python -m hippocampus` as a real subprocess (MCP installed,
mounted on the first call), the real SerenMemory in another process. Target: <= 0.30 s (median of at least
ten starts, with its spread).

    python tests/bench/bench_startup.py [--runs 10]
"""
from __future__ import annotations

import subprocess
import time

from _common import banner, PY, MemoryProc, ServiceProc, median, pct, runs_arg, service_env, table, tmpdir

TARGET = 0.30


def floor(code: str) -> float:
    """The wall time of a bare interpreter running `code` (the machine's floor right now)."""
    t0 = time.monotonic()
    subprocess.run([PY, "-c", code], check=True, env=service_env())
    return time.monotonic() - t0


LIBS = "import requests, falcon, waitress, pykka, ruamel.yaml"


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs = runs_arg(10)
    work = tmpdir("startup")
    mem = MemoryProc(work).start()
    try:
        ServiceProc(work / "warm", mem.url).start().stop()       # compile the bytecode once
        wall, cpu, rss, bare, libs, mcp = [], [], [], [], [], []
        for i in range(runs):
            bare.append(floor("pass"))
            libs.append(floor(LIBS))
            svc = ServiceProc(work / f"run{i}", mem.url, sleep={"mode": "thread"}).start(mcp=False)
            wall.append(svc.startup_seconds)
            cpu.append(svc.cpu())
            rss.append(svc.rss())
            mcp.append(svc.startup_seconds + svc.wait_mcp())
            svc.stop()
            print(f"  run {i + 1}: {svc.startup_seconds:.3f} s to the first 200 (service CPU {cpu[-1]:.2f} s)",
                  flush=True)
    finally:
        mem.stop()
    table(f"start to first 200 on /health, median of {runs}", [
        ("start -> first 200 on /health", f"{median(wall):.3f} s", f"<= {TARGET} s", median(wall) <= TARGET),
        ("  service CPU by then", f"{median(cpu):.2f} s", "(info)", None),
        ("  resident memory by then", f"{median(rss):.1f} MB", "(info)", None),
        ("  start -> the first /mcp call answered (it mounts the SDK)", f"{median(mcp):.3f} s", "(info)", None),
        ("  spread: fastest / quartiles / slowest",
         f"{min(wall):.3f} / {pct(wall, 25):.3f}-{pct(wall, 75):.3f} / {max(wall):.3f} s", "(info)", None),
        ("  floor: bare `python -c pass`", f"{median(bare):.3f} s", "(info: this machine now)", None),
        ("  floor: python importing the libraries only", f"{median(libs):.3f} s", "(info: this machine now)", None),
        ("  start / libraries-only floor", f"{median(wall) / median(libs):.2f}x", "(info)", None),
    ])


if __name__ == "__main__":
    main()
