"""The first MCP call on a freshly started service, from a real client (the Python SDK's, warm: its own
imports and first session done elsewhere), beside a warm call on the same service. The service runs as
`python -m hippocampus` with server.mcp_preload on (what --mcp sets), Memory in another process. Each run:
start, the first /health 200, then one whole MCP session (initialize, sleep_status) `--after` seconds later
(default 1.0: a client that connects within a second of the start), then a second session (warm); resident
memory after them. Targets: the first within 0.3 s of the warm one, memory after one session <= 70 MB.
The same first session right at the /health 200 (`--after 0`) is reported too: the SDK is then still loading.

    python tests/bench/bench_first_mcp.py [--runs 5] [--after 1.0]
"""
from __future__ import annotations

import asyncio
import sys
import time

from _common import MemoryProc, ServiceProc, banner, median, runs_arg, table, tmpdir

TARGET_GAP = 0.3
TARGET_MB = 70.0


def arg(name: str, default: float) -> float:
    for i, a in enumerate(sys.argv):
        if a == name:
            return float(sys.argv[i + 1])
    return default


def session(url: str) -> float:
    """One MCP session from the SDK's client (connect, initialize, sleep_status, close): seconds."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> float:
        t0 = time.monotonic()
        async with httpx2.AsyncClient(timeout=60) as http:
            async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
                res = await client.call_tool("sleep_status", {})
                assert not res.is_error and res.structured_content["ok"] is True, res
        return time.monotonic() - t0
    return asyncio.run(go())


def one_run(work, mem_url: str, i: int, after: float) -> tuple:
    svc = ServiceProc(work / f"run{i}-{after:g}", mem_url, server={"mcp_preload": True},
                      sleep={"mode": "thread"}).start(mcp=False)
    try:
        time.sleep(after)                   # a client that connects this long after the service answered
        first = session(svc.url)
        warm = min(session(svc.url) for _ in range(3))
        return first, warm, svc.rss(), svc.startup_seconds
    finally:
        svc.stop()


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, after = runs_arg(5), arg("--after", 1.0)
    work = tmpdir("first-mcp")
    mem = MemoryProc(work).start()
    try:
        warm_client = ServiceProc(work / "client-warm-up", mem.url, server={"mcp_preload": True}).start(mcp=False)
        session(warm_client.url)            # the client's own imports and first session, not measured
        warm_client.stop()
        rows, at_once = [], []
        for i in range(runs):
            rows.append(one_run(work, mem.url, i, after))
            at_once.append(one_run(work, mem.url, i, 0.0))
            f, w, rss, start = rows[-1]
            print(f"  run {i + 1}: start {start:.3f} s; first session {f:.3f} s, warm {w:.3f} s, RSS {rss:.1f} MB; "
                  f"first session right at /health {at_once[-1][0]:.3f} s", flush=True)
    finally:
        mem.stop()
    first, warm, rss = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    gap = median([f - w for f, w, *_ in rows])
    table(f"the first MCP session on a fresh service (mcp_preload on, {after:g} s after /health), median of {runs}", [
        ("first session (initialize + sleep_status)", f"{median(first):.3f} s", "(info)", None),
        ("warm session on the same service", f"{median(warm):.3f} s", "(info)", None),
        ("first minus warm", f"{gap:.3f} s", f"<= {TARGET_GAP} s", gap <= TARGET_GAP),
        ("resident memory after the sessions", f"{median(rss):.1f} MB", f"<= {TARGET_MB:g} MB", median(rss) <= TARGET_MB),
        ("  fastest / slowest first session", f"{min(first):.3f} / {max(first):.3f} s", "(info)", None),
        ("  first session right at the /health 200 (SDK still loading)", f"{median([r[0] for r in at_once]):.3f} s",
         "(info)", None),
    ])


if __name__ == "__main__":
    main()
