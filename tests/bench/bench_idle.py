"""The idle service: resident memory after 30 s idle with the MCP endpoint offered, and again after one MCP
tool call (the SDK is loaded on the first call; both <= 70 MB), and the CPU it uses over 60 s idle
(<= 0.2 %). The service runs as a subprocess in thread mode with the default heartbeat (its
own timer is running), Memory in another process; nothing calls the service while it is measured.

    python tests/bench/bench_idle.py [--runs 3] [--settle 30] [--idle 60]
"""
from __future__ import annotations

import subprocess
import sys
import time

from _common import HERE, PY, banner, MemoryProc, ServiceProc, median, runs_arg, service_env, table, tmpdir

TARGET_MB = 70.0
TARGET_PCT = 0.2
SDK_PART = (f"import sys; sys.path.insert(0, {str(HERE.parents[1])!r})\ntry:\n    from hippocampus.mcp import sdk; "
            "sdk.load()\nexcept ImportError:\n    import mcp.server, a2wsgi")


def arg(name: str, default: float) -> float:
    for i, a in enumerate(sys.argv):
        if a == name:
            return float(sys.argv[i + 1])
    return default


def rss_of(code: str) -> float:
    """Resident memory of a bare interpreter after running `code`."""
    out = subprocess.run([PY, "-c", code + "\nimport re\nprint(re.search(r'VmRSS:\\s+(\\d+)', "
                          "open('/proc/self/status').read()).group(1))"], capture_output=True, text=True,
                         env=service_env(), check=True)
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, settle, idle = runs_arg(3), arg("--settle", 30.0), arg("--idle", 60.0)
    work = tmpdir("idle")
    mem = MemoryProc(work).start()
    rss, pct, rss_start, rss_bare, rss_mcp = [], [], [], [], []
    try:
        for i in range(runs):
            svc = ServiceProc(work / f"run{i}", mem.url, sleep={"mode": "thread"}).start(mcp=False)
            bare = ServiceProc(work / f"run{i}-no-mcp", mem.url, sleep={"mode": "thread"})
            bare.start(mcp=False, launcher=[str(HERE / "no_mcp.py")])
            try:
                rss_start.append(svc.rss())
                time.sleep(settle)
                rss.append(svc.rss())
                rss_bare.append(bare.rss())
                bare.stop()
                c0, t0 = svc.cpu(), time.monotonic()
                time.sleep(idle)
                pct.append((svc.cpu() - c0) / (time.monotonic() - t0) * 100)
                assert not svc.mcp_tool_call().get("isError")
                time.sleep(2)
                rss_mcp.append(svc.rss())
                print(f"  run {i + 1}: RSS {rss_start[-1]:.1f} MB at start, {rss[-1]:.1f} MB after {settle:g} s idle; "
                      f"CPU over {idle:g} s idle {pct[-1]:.3f} %; RSS after one MCP call {rss_mcp[-1]:.1f} MB",
                      flush=True)
            finally:
                bare.stop()
                svc.stop()
    finally:
        mem.stop()
    table(f"the idle service (thread mode, MCP offered), median of {runs}", [
        (f"resident memory after {settle:g} s idle", f"{median(rss):.1f} MB", f"<= {TARGET_MB:g} MB",
         median(rss) <= TARGET_MB),
        ("resident memory after one MCP tool call", f"{median(rss_mcp):.1f} MB", f"<= {TARGET_MB:g} MB",
         median(rss_mcp) <= TARGET_MB),
        (f"CPU over {idle:g} s idle", f"{median(pct):.3f} %", f"<= {TARGET_PCT} %", median(pct) <= TARGET_PCT),
        ("  the same service without the MCP SDK (no_mcp.py)", f"{median(rss_bare):.1f} MB", "(info)", None),
        ("  python importing the whole MCP SDK, less a bare python",
         f"{rss_of('import mcp.server, a2wsgi') - rss_of('pass'):.1f} MB", "(info)", None),
        ("  python loading the endpoint's part of it (hippocampus.mcp.sdk), less a bare python",
         f"{rss_of(SDK_PART) - rss_of('pass'):.1f} MB", "(info)", None),
    ])


if __name__ == "__main__":
    main()
