"""POST /nudge to the start of the tick it causes: from just before the POST is sent to the first request
the service makes to Memory (seen by a recording TCP proxy between the service and Memory).
Target: median <= 20 ms.

The service runs as a subprocess in external mode (no timer ticks), Memory in another process; nothing
else talks to Memory through the proxy, and each nudge waits until the last tick's traffic has stopped.

    python tests/bench/bench_nudge.py [--runs 3] [--nudges 20]
"""
from __future__ import annotations

import sys
import time

import requests

from _common import banner, MemoryProc, Proxy, ServiceProc, median, pct, runs_arg, table, tmpdir, wait_for
from tests.harness.reviewer import MemoryHand

TARGET_MS = 20.0


def nudges_arg(default: int) -> int:
    for i, a in enumerate(sys.argv):
        if a == "--nudges":
            return int(sys.argv[i + 1])
    return default


def quiet(proxy: Proxy, for_s: float = 0.3, timeout: float = 30.0) -> None:
    """Wait until the service has sent Memory nothing for `for_s` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with proxy.lock:
            last = proxy.sent[-1][0] if proxy.sent else 0.0
        if time.monotonic() - last >= for_s:
            return
        time.sleep(0.05)
    raise AssertionError("Memory traffic never stopped")


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, n = runs_arg(3), nudges_arg(20)
    work = tmpdir("nudge")
    mem = MemoryProc(work).start()
    per_run, allv = [], []
    try:
        for i in range(runs):
            mem.fresh()
            hand = MemoryHand(mem.url)
            hand.short("a lone note", topic="odd")          # something to read, below the threshold
            proxy = Proxy(mem.url)
            svc = ServiceProc(work / f"run{i}", proxy.url).start()
            s = requests.Session()
            try:
                s.post(svc.url + "/nudge", timeout=5)       # warm the path once
                quiet(proxy)
                lat = []
                for _ in range(n):
                    t0 = time.monotonic()
                    r = s.post(svc.url + "/nudge", timeout=5)
                    assert r.status_code == 200 and r.json()["woke"], r.text
                    first = wait_for(lambda: proxy.first_after(t0), timeout=10, interval=0.005,
                                     what="the nudged tick's first request to Memory")
                    quiet(proxy)
                    lat.append((first[0] - t0) * 1000)
                per_run.append(median(lat))
                allv.extend(lat)
                print(f"  run {i + 1}: median {median(lat):.1f} ms, p90 {pct(lat, 90):.1f} ms, "
                      f"min {min(lat):.1f} ms (first request: {first[1][:40]!r})", flush=True)
            finally:
                svc.stop()
                proxy.stop()
    finally:
        mem.stop()
    m = median(per_run)
    table(f"POST /nudge -> first request to Memory, {n} nudges x {runs} runs", [
        ("median (of the runs' medians)", f"{m:.1f} ms", f"<= {TARGET_MS:g} ms", m <= TARGET_MS),
        ("p90 / max over all nudges", f"{pct(allv, 90):.1f} / {max(allv):.1f} ms", "(info)", None),
    ])


if __name__ == "__main__":
    main()
