"""Model residency with handover over a whole chain: the seconds the small model's server was up over
the seconds it spent generating (GET /status model_lifecycle up_seconds_total / busy_seconds_total).
Target: <= 1.15.

The model is the harness's stand-in llama-server (tests/harness/fake_llama_server.py, started and stopped
by the service: model.lifecycle.manage with a start line, handover on, every other lifecycle setting at
its default), wrapped by slow_llama.py so each answer takes 3 s (FAKE_LLAMA_DELAY) and it "loads" for
its default 1 s. The chain is bench_chain's: a sleep over 3 clusters (3 answers), one operation denied,
the redraft (1 answer), approved, closed, driven by nudges. With handover the server stops when each
draft goes out, so it starts twice.

    python tests/bench/bench_residency.py [--runs 3] [--delay 3]

The floor printed beside it is what the stand-in's own start costs (it loads for 1 s, plus Python's
start): with two starts and 12 s of answers that alone is about 1.2 on a quiet machine.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time

import requests

from _common import (banner, HERE, PY, MemoryProc, Receiver, ServiceProc, free_port, median, runs_arg,
                     seed_three_clusters, service_env, table, tmpdir, wait_for)
from bench_chain import one_chain
from tests.harness.reviewer import MemoryHand

TARGET = 1.15
DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 3.0
REPLY = json.dumps({"operations": [{"kind": "new_core", "content": "Something true about it",
                                    "fragments": ["f1", "f2", "f3"], "target": None,
                                    "rationale": "the fragments agree"}]})


def standin_start(model_file, script) -> float:
    """The stand-in's own start: launch to the first 200 on /health, polled every 10 ms, no service."""
    port = free_port()
    t0 = time.monotonic()
    p = subprocess.Popen([PY, str(HERE / "slow_llama.py"), "-m", str(model_file), "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=service_env({"FAKE_LLAMA_SCRIPT": str(script)}))
    try:
        wait_for(lambda: _ok(f"http://127.0.0.1:{port}/health"), timeout=60, interval=0.01, what="the stand-in")
        return time.monotonic() - t0
    finally:
        p.terminate()
        p.wait(10)


def _ok(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs = runs_arg(3)
    work = tmpdir("residency")
    model_file = work / "model.gguf"
    model_file.write_bytes(b"not really a model")
    script = work / "replies.json"
    script.write_text(json.dumps([REPLY]))
    mem = MemoryProc(work).start()
    rows: dict = {"ratio": [], "up": [], "busy": [], "starts": [], "load": [], "floor": [], "ours": []}
    try:
        for i in range(runs):
            mem.fresh()
            hand = MemoryHand(mem.url)
            seed_three_clusters(hand)
            port = free_port()
            start = " ".join(shlex.quote(a) for a in [PY, str(HERE / "slow_llama.py"), "-m", str(model_file),
                                                      "--host", "127.0.0.1", "--port", str(port)])
            hook = Receiver()
            svc = ServiceProc(work / f"run{i}", mem.url,
                              model={"url": f"http://127.0.0.1:{port}/v1",
                                     "lifecycle": {"manage": True, "start": start, "handover": True}},
                              sleep={"promote_min_evidence": 2, "max_attempts": 3},
                              notify={"webhook_url": hook.url,
                                      "events": ["sleep_done", "tend_resubmitted", "chain_closed"]})
            svc.start(env={"FAKE_LLAMA_DELAY": str(DELAY), "FAKE_LLAMA_SCRIPT": str(script)})
            try:
                one_chain(svc, hand, hook, requests.Session())
                st = wait_for(lambda: (lambda s: s if s["model_lifecycle"]["state"] == "stopped"
                                       and not s["model_lifecycle"]["started_by_us"] else None)(
                    requests.get(svc.url + "/status", timeout=10).json()), timeout=60, what="the model to stop")
                ml = st["model_lifecycle"]
                ev = requests.get(svc.url + "/events", params={"limit": 1000}, timeout=10).json()["entries"]
                starts = [e for e in ev if e["type"] == "model_started"]
                up, busy = ml["up_seconds_total"], ml["busy_seconds_total"]
                rows["ratio"].append(up / busy)
                rows["up"].append(up)
                rows["busy"].append(busy)
                rows["starts"].append(len(starts))
                rows["load"].append(sum(e.get("seconds") or 0 for e in starts))
                own = standin_start(model_file, script)
                rows["floor"].append((busy + len(starts) * own) / busy)
                rows["ours"].append((up - len(starts) * own) / busy)
                print(f"  run {i + 1}: up {up:.1f} s / generating {busy:.1f} s = {up / busy:.3f}; "
                      f"{len(starts)} start(s), {rows['load'][-1]:.1f} s of them loading (the stand-in alone "
                      f"takes {own:.2f} s to answer /health: floor {rows['floor'][-1]:.3f})", flush=True)
            finally:
                svc.stop()
                hook.stop()
    finally:
        mem.stop()
    m = {k: median(v) for k, v in rows.items()}
    table(f"model residency with handover over a whole chain, median of {runs}", [
        ("seconds up / seconds generating", f"{m['ratio']:.3f}", f"<= {TARGET}", m["ratio"] <= TARGET),
        ("  up / generating", f"{m['up']:.1f} / {m['busy']:.1f} s", "(info)", None),
        ("  starts, and seconds up before the first answer", f"{m['starts']:.0f}, {m['load']:.1f} s",
         "(info: the stand-in loads for 1 s)", None),
        ("  floor: (generating + starts x the stand-in's own start) / generating", f"{m['floor']:.3f}",
         "(info: no service could do better)", None),
        ("  the service's share: (up - starts x own start) / generating", f"{m['ours']:.3f}", "(info)", None),
    ])


if __name__ == "__main__":
    main()
