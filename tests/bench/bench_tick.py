"""An idle tick: the Memory requests a nudged tick makes when there is nothing to do, named, and the service's
CPU for the nudge and its tick (the HTTP request, the event, the tick, and the quality report's read when it
falls due). Target: at most four requests, under 5 ms of service CPU per tick.

The service runs as a subprocess in external mode (only nudges tick), Memory in another process, a recording
TCP proxy between them; each nudge waits until the last tick's traffic has stopped. A sleep on record keeps it
before bedtime, so the tick finds nothing to do.

    python tests/bench/bench_tick.py [--runs 3] [--nudges 20]
"""
from __future__ import annotations

import re
import time

import requests

from _common import MemoryProc, Proxy, ServiceProc, banner, cpu_seconds, median, runs_arg, table, tmpdir, wait_for
from bench_nudge import nudges_arg, quiet
from tests.harness.reviewer import MemoryHand


def request_lines(proxy: Proxy, t0: float) -> list:
    with proxy.lock:
        chunks = [c for t, c in proxy.sent if t >= t0]
    out = []
    for c in chunks:
        m = re.match(rb"(GET|POST|PUT|DELETE) (\S+)", c)
        if m:
            out.append(f"{m.group(1).decode()} {m.group(2).decode()}")
    return out


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, n = runs_arg(3), nudges_arg(20)
    work = tmpdir("tick")
    mem = MemoryProc(work).start()
    calls, cpu, quality = [], [], []
    try:
        for i in range(runs):
            mem.fresh()
            MemoryHand(mem.url).short("a lone note", topic="odd")
            proxy = Proxy(mem.url)
            svc = ServiceProc(work / f"run{i}", proxy.url).start()
            s = requests.Session()
            try:
                s.post(svc.url + "/sleep?without_brief=true", timeout=30)     # a sleep on record: not bedtime
                s.post(svc.url + "/nudge", timeout=5)
                quiet(proxy)
                c0 = cpu_seconds(svc.pid)
                for _ in range(n):
                    t0 = time.monotonic()
                    s.post(svc.url + "/nudge", timeout=5)
                    wait_for(lambda: proxy.first_after(t0), timeout=10, interval=0.005, what="the tick")
                    quiet(proxy)
                    seen = request_lines(proxy, t0)
                    # the quality report's background read (all drafts, after a nudge, at most every few
                    # seconds) is not the tick's: named apart
                    calls.append([c for c in seen if "limit=1000" not in c])
                    quality.append(len(seen) - len(calls[-1]))
                cpu.append((cpu_seconds(svc.pid) - c0) / n * 1000)
                print(f"  run {i + 1}: {len(calls[-1])} requests a tick: {', '.join(calls[-1])}; "
                      f"{cpu[-1]:.2f} ms CPU a tick (with the nudge's own request)", flush=True)
            finally:
                svc.stop()
                proxy.stop()
    finally:
        mem.stop()
    most = max(len(c) for c in calls)
    table(f"an idle nudged tick, {n} nudges x {runs} runs", [
        ("Memory requests a tick (most seen)", str(most), "<= 4", most <= 4),
        ("quality-report reads beside them (total)", str(sum(quality)), "(info)", None),
        ("service CPU a nudge and its tick (median)", f"{median(cpu):.2f} ms", "< 5 ms", median(cpu) < 5),
    ])


if __name__ == "__main__":
    main()
