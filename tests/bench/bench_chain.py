"""A whole chain with an instant model, driven by nudges: a brief, a sleep over 3 clusters (one draft of 3
operations), one operation denied, the redraft, approved, the chain closed. The service's CPU seconds
and the wall time. Targets: CPU <= 0.13 s, wall <= 0.45 s (medians of runs).

wall = the sum of the three nudged steps, each from just before its POST /nudge to the webhook event that
says it is done (sleep_done, tend_resubmitted, chain_closed): the reviewer's own time is not in it.
CPU  = the service process's utime+stime from before the first nudge to 0.5 s after chain_closed (the
reviewer's turns included: the service idles through them; its idle rate is printed beside).
The service is a subprocess (external mode), Memory another (its CPU is printed beside, for the split;
it includes the reviewer's calls), the model the harness's FakeModel in this process, answering at once.

    python tests/bench/bench_chain.py [--runs 5]
"""
from __future__ import annotations

import time

import requests

from _common import (banner, MemoryProc, Receiver, ServiceProc, median, runs_arg, scripted_responder,
                     seed_three_clusters, table, tmpdir)
from tests.harness.fake_model import FakeModel
from tests.harness.reviewer import MemoryHand

TARGET_CPU = 0.13
TARGET_WALL = 0.45
CRITIQUE = "not quite; say: The rose garden bloomed early this spring"


def one_chain(svc, hand: MemoryHand, hook: Receiver, s: requests.Session) -> dict:
    segs = []
    t = time.monotonic()
    s.post(svc.url + "/nudge", timeout=5)
    done, _ = hook.wait("sleep_done")
    segs.append(done - t)
    first = next(d for d in hand.drafts("pending") if d["attempt"] == 1)
    assert len(first["operations"]) == 3, first["operations"]
    hand.review(first["id"], [
        {"op": op["index"], "verdict": "deny", "critique": CRITIQUE} if "garden" in (op.get("topic") or "")
        else {"op": op["index"], "verdict": "approve"} for op in first["operations"]])
    t = time.monotonic()
    s.post(svc.url + "/nudge", timeout=5)
    done, _ = hook.wait("tend_resubmitted")
    segs.append(done - t)
    second = next(d for d in hand.drafts("pending") if d["attempt"] == 2)
    hand.approve_all(second["id"])
    t = time.monotonic()
    s.post(svc.url + "/nudge", timeout=5)
    done, ev = hook.wait("chain_closed")
    segs.append(done - t)
    assert ev["attempts"] == 2 and ev["landed"] == 3, ev
    return {"segs": segs, "wall": sum(segs)}


def main() -> None:
    banner(__doc__.strip().split("\n\n")[0])
    runs = runs_arg(5)
    work = tmpdir("chain")
    mem = MemoryProc(work).start()
    fm = FakeModel(responder=scripted_responder(0.0)).start()
    rows: dict = {"wall": [], "cpu": [], "idle": [], "mem_cpu": [], "s1": [], "s2": [], "s3": []}
    try:
        for i in range(runs):
            mem.fresh()
            hand = MemoryHand(mem.url)
            seed_three_clusters(hand)
            hook = Receiver()
            svc = ServiceProc(work / f"run{i}", mem.url, model={"url": fm.url},
                              sleep={"promote_min_evidence": 2, "max_attempts": 3},
                              notify={"webhook_url": hook.url,
                                      "events": ["sleep_done", "tend_resubmitted", "chain_closed"]}).start()
            s = requests.Session()
            try:
                time.sleep(1.0)
                i0, ti0 = svc.cpu(), time.monotonic()
                time.sleep(3.0)
                idle_rate = (svc.cpu() - i0) / (time.monotonic() - ti0)
                c0, m0, t0 = svc.cpu(), mem.cpu(), time.monotonic()
                r = one_chain(svc, hand, hook, s)
                time.sleep(0.5)
                cpu = svc.cpu() - c0
                span = time.monotonic() - t0
                rows["wall"].append(r["wall"])
                rows["cpu"].append(cpu)
                rows["idle"].append(idle_rate * span)
                rows["mem_cpu"].append(mem.cpu() - m0)
                for k, v in zip(("s1", "s2", "s3"), r["segs"]):
                    rows[k].append(v)
                print(f"  run {i + 1}: wall {r['wall']:.3f} s (sleep {r['segs'][0]:.3f}, redraft {r['segs'][1]:.3f}, "
                      f"close {r['segs'][2]:.3f}); service CPU {cpu:.3f} s (idling would have used "
                      f"{idle_rate * span:.3f} s); Memory CPU {rows['mem_cpu'][-1]:.3f} s", flush=True)
            finally:
                svc.stop()
                hook.stop()
    finally:
        fm.stop()
        mem.stop()
    m = {k: median(v) for k, v in rows.items()}
    table(f"a whole chain (3 clusters, deny one, redraft, approve, close), median of {runs}", [
        ("service CPU", f"{m['cpu']:.3f} s", f"<= {TARGET_CPU} s", m["cpu"] <= TARGET_CPU),
        ("wall (three nudged steps)", f"{m['wall']:.3f} s", f"<= {TARGET_WALL} s", m["wall"] <= TARGET_WALL),
        ("  sleep / redraft / close", f"{m['s1']:.3f} / {m['s2']:.3f} / {m['s3']:.3f} s", "(info)", None),
        ("  of it, what idling over the same span uses", f"{m['idle']:.3f} s", "(info)", None),
        ("  Memory CPU over the same span", f"{m['mem_cpu']:.3f} s", "(info: includes the reviewer)", None),
    ])


if __name__ == "__main__":
    main()
