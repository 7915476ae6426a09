"""GET /status under 16 concurrent keep-alive clients for 10 s: idle, and while a sleep waits on a model
that takes 3 s per answer. p50, p99 and requests/s; target p99 <= 10 ms in both, and beside the bare app
(floor_server.py) in the same run: p99 within 1.2x of its p99, requests/s at least 0.8x its.

Two loads, both 16 connections:
  saturating  each client sends its next request as soon as the last is answered (closed loop): the
              latency is then mostly queueing (Little: p50 ~ 16 / requests-per-second);
  paced       each client sends 20 requests/s (320/s in all), a busy viewer's worth: the latency is the
              service's own answer time.
Each run also loads a bare Falcon-on-waitress app with a fixed body of the same size (floor_server.py)
the same way: the floor this machine allows right now; compare against it, not against the target alone.
The service runs as a subprocess (external mode, a model configured), Memory in another process,
the model is the harness's FakeModel in this process.

    python tests/bench/bench_status.py [--runs 3] [--seconds 10]
"""
from __future__ import annotations

import subprocess
import sys

import requests

from _common import (banner, HERE, PY, MemoryProc, ServiceProc, free_port, load, median, pct, runs_arg,
                     scripted_responder, service_env, table, tmpdir, wait_for)
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import MemoryHand

TARGET_P99_MS = 10.0
FLOOR_P99_X = 1.2           # p99 within 1.2x of the bare app's under the same load, in the same run
FLOOR_RPS_X = 0.8           # and at least 0.8x its requests per second
CLIENTS = 16
PACED_RATE = 20.0
MODEL_DELAY = 3.0
TOPICS = ("tea", "garden", "river", "cello", "lantern", "harbour", "orchard", "meadow")


def seconds_arg(default: float) -> float:
    for i, a in enumerate(sys.argv):
        if a == "--seconds":
            return float(sys.argv[i + 1])
    return default


class Floor:
    """tests/bench/floor_server.py: bare Falcon on waitress, a fixed body of the same size."""

    def __init__(self, body_bytes: int = 4500, threads: int = 8):
        from _common import cpu_seconds

        port = free_port()
        self.proc = subprocess.Popen([PY, str(HERE / "floor_server.py"), str(port), str(threads), str(body_bytes)],
                                     env=service_env(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        self.cpu = lambda: cpu_seconds(self.proc.pid)
        wait_for(lambda: _ok(self.url + "/status"), timeout=60, what="the floor server")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def _ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False


def phase(svc, seconds: float, paced: bool) -> dict:
    c0 = svc.cpu()
    r = load(svc.url, "/status", CLIENTS, seconds, per_client_rate=PACED_RATE if paced else 0.0)
    r["cpu_per_req_ms"] = (svc.cpu() - c0) / max(1, r["count"]) * 1000
    r["p50"], r["p99"] = pct(r["lat"], 50) * 1000, pct(r["lat"], 99) * 1000
    assert not r["errors"], r["errors"][:5]
    return r


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs, seconds = runs_arg(3), seconds_arg(10.0)
    work = tmpdir("status")
    mem = MemoryProc(work).start()
    fm = FakeModel(responder=scripted_responder(MODEL_DELAY)).start()
    results: dict = {}
    try:
        for i in range(runs):
            mem.fresh()
            hand = MemoryHand(mem.url)
            for t in TOPICS:
                for d in range(2):
                    hand.short(f"a note about the {t}, day {d}", topic=t)
            hand.brief("all of it mattered", promote=list(TOPICS))
            svc = ServiceProc(work / f"run{i}", mem.url, model={"url": fm.url},
                              sleep={"promote_min_evidence": 2}).start()
            floor = Floor(len(requests.get(svc.url + "/status", timeout=5).content))
            try:
                load(svc.url, "/status", 4, 1.0)                       # warm
                load(floor.url, "/status", 4, 1.0)
                for name, paced in (("floor saturating", False), ("floor paced", True)):
                    results.setdefault(name, []).append(phase(floor, seconds, paced))
                for name, paced in (("idle saturating", False), ("idle paced", True)):
                    results.setdefault(name, []).append(phase(svc, seconds, paced))
                requests.post(svc.url + "/nudge", timeout=5)
                wait_for(lambda: fm.in_flight, timeout=30, what="the sleep to wait on the model")
                for name, paced in (("sleeping saturating", False), ("sleeping paced", True)):
                    results.setdefault(name, []).append(phase(svc, seconds, paced))
                assert fm.in_flight, "the sleep finished before the measurement did: add topics"
                r = results
                print(f"  run {i + 1}: " + "; ".join(
                    f"{k} p50 {v[-1]['p50']:.1f} / p99 {v[-1]['p99']:.1f} ms, {v[-1]['rps']:.0f}/s"
                    for k, v in r.items()), flush=True)
            finally:
                floor.stop()
                svc.stop()
    finally:
        fm.stop()
        mem.stop()
    table(f"GET /status, {CLIENTS} clients x {seconds:g} s, median of {runs} runs", summary(results))


def summary(results: dict) -> list:
    """Each phase's figures, and the saturating ones beside the bare app's of the same run: p99 within
    1.2x of the floor's, requests/s at least 0.8x (the ratios are taken run by run, then the median)."""
    rows = []
    for name, rs in results.items():
        p50, p99 = median([r["p50"] for r in rs]), median([r["p99"] for r in rs])
        rps, cpu = median([r["rps"] for r in rs]), median([r["cpu_per_req_ms"] for r in rs])
        floor = name.startswith("floor")
        rows.append((f"{name}: p50 / p99", f"{p50:.1f} / {p99:.1f} ms",
                     "(bare falcon+waitress, same load)" if floor else f"p99 <= {TARGET_P99_MS:g} ms",
                     None if floor else p99 <= TARGET_P99_MS))
        rows.append((f"{name}: requests/s, service CPU per request", f"{rps:.0f}/s, {cpu:.2f} ms", "(info)", None))
        base = results.get("floor saturating")
        if floor or not name.endswith("saturating") or not base:   # paced answers are ~1 ms: ratios are noise
            continue
        p99_x = median([r["p99"] / f["p99"] for r, f in zip(rs, base)])
        rps_x = median([r["rps"] / f["rps"] for r, f in zip(rs, base)])
        rows.append((f"{name}: p99 / the floor's", f"{p99_x:.2f}x", f"<= {FLOOR_P99_X}x", p99_x <= FLOOR_P99_X))
        rows.append((f"{name}: requests/s / the floor's", f"{rps_x:.2f}x", f">= {FLOOR_RPS_X}x", rps_x >= FLOOR_RPS_X))
    return rows


if __name__ == "__main__":
    main()
