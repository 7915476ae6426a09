"""The real llama-server (the tiny random-weight model): what the service itself costs per drafting call,
beside the server's own time, and the model's residency with hand-over over N sleeps.

1. Per drafting call: the service's drafting path (draft_prompt, ModelClient.chat, parse_answer, the same
   calls drafter.draft_pile makes, without Memory's candidate search) against one real server, the JSON
   schema of tests/harness/tiny_schema.py sent. Measured per call: this process's CPU around the call
   (time.process_time: the server is another process), the wall time, and the server's own time from its
   answer's `timings` (prompt_ms + predicted_ms). The service's own cost is the wall minus the server's time
   (HTTP, JSON, the prompt and the reading) and the CPU.
2. Residency: ModelLifecycle (the service's own, handover on, keep-warm 0, the Jetson profile's args with the
   tiny model) over N sleeps of one call each: ensure (the start), the call, release, handover (the stop).
   up = its up_seconds_total; generating = the server's own time summed; busy = the lifecycle's busy total
   (the call as the service timed it). The floor beside it: the server's own start (launch to /health 200).

    python tests/bench/bench_real_model.py [--runs 10] [--sleeps 5] [--model tiny|smollm2|gemma3]

--model: a real trained model (tests/harness/real_models.py's cache) instead of the tiny random-weight one: the
residency of issue 40's closing note (up ÷ generating with hand-over, the real binary and the real model).

Needs the built binary (python -m tests.harness.llama_build) and gguf-py; says why and exits 2 otherwise.
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import requests

from _common import banner, median, runs_arg, table
from hippocampus.clock import Clock
from tests.harness.ports import free_port
from hippocampus.drafting.answer import parse_answer
from hippocampus.drafting.prompt import draft_prompt
from hippocampus.model.client import ModelClient
from hippocampus.model.lifecycle import ModelLifecycle
from tests.harness import llama_server, real_models, tiny_gguf
from tests.harness.llama_server import LlamaServer
from tests.harness.tiny_schema import model_block

SLEEPS = int(sys.argv[sys.argv.index("--sleeps") + 1]) if "--sleeps" in sys.argv else 5
MODEL = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else "tiny"
ENTRIES = [{"id": f"s{i}", "content": f"we drank green tea in the afternoon, day {i}", "metadata": {"ts": 1.7e9}}
           for i in range(4)]


class Timed(requests.Session):
    """A session that keeps the last answer's body: the server's own `timings`."""

    last: dict = {}

    def post(self, *a, **kw):
        resp = super().post(*a, **kw)
        try:
            self.last = resp.json()
        except ValueError:
            self.last = {}
        return resp


def server_ms(body: dict) -> float:
    t = body.get("timings") or {}
    return float(t.get("prompt_ms") or 0.0) + float(t.get("predicted_ms") or 0.0)


def model_config(url: str, lifecycle: dict | None = None):
    from hippocampus import config as cm

    data = {"model": model_block(url, **({"lifecycle": lifecycle} if lifecycle else {})),
            "memory": {"url": "http://127.0.0.1:9"},
            "sleep": {"mode": "external", "state_path": str(Path(tempfile.mkdtemp()) / "state.json")}}
    return cm.build(data, environ={})


def one_call(client: ModelClient, session: Timed, cfg) -> dict:
    c0, w0 = time.process_time(), time.perf_counter()
    prompt, markers = draft_prompt(voice_block="", steer=None, topic="green tea", entries=ENTRIES, candidates=[])
    answer = client.chat(prompt)
    parsed = parse_answer(answer.text, finish_reason=answer.finish_reason, markers=markers,
                          max_tokens=cfg.model.max_tokens)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    srv = float((answer.timings or {}).get("ms") or server_ms(session.last)) / 1000.0   # the server's timings
    return {"wall": wall, "cpu": cpu, "server": srv, "ours": wall - srv, "ops": len(parsed.operations),
            "tokens": (answer.usage or {}).get("completion_tokens", 0)}


def per_call(binary: Path, model: Path, runs: int) -> list:
    srv = LlamaServer(binary, model, "-c", "4096", "--seed", "7", threads=2).start()
    try:
        cfg = model_config(srv.url + "/v1")
        session = Timed()
        client = ModelClient(cfg.model, session=session)
        one_call(client, session, cfg)                  # the first: the prompt cache and the grammar warm up
        return [one_call(client, session, cfg) for _ in range(runs)]
    finally:
        srv.stop()


def start_floor(binary: Path, model: Path, runs: int = 3) -> float:
    took = []
    for _ in range(runs):
        srv = LlamaServer(binary, model, "-ngl", "99", "-c", "4096", threads=2)
        t0 = time.monotonic()
        srv.start()
        took.append(time.monotonic() - t0)
        srv.stop()
    return median(took)


def residency(binary: Path, model: Path, sleeps: int) -> dict:
    port = free_port()
    cfg = model_config(f"http://127.0.0.1:{port}/v1", {
        "server": str(binary), "model_path": str(model), "server_args": "-ngl 99 -c 4096 -np 1",
        "handover": True, "keep_warm_seconds": 0, "poll_seconds": 0.05, "ready_timeout_seconds": 60,
        "stop_grace_seconds": 3})
    state = Path(cfg.sleep.state_path).parent
    lc = ModelLifecycle(cfg.model, state_dir=state, clock=Clock(), emit=lambda kind, **f: f)
    session = Timed()
    client = ModelClient(cfg.model, session=session)
    generating, stops = 0.0, []
    try:
        for _ in range(sleeps):
            lc.ensure()
            t0 = time.monotonic()
            call = one_call(client, session, cfg)
            lc.release(time.monotonic() - t0)
            generating += call["server"]
            s0 = time.monotonic()
            lc.handover()
            stops.append(time.monotonic() - s0)
    finally:
        lc.shutdown()
    snap = lc.snapshot()
    return {"up": snap["up_seconds_total"], "busy": snap["busy_seconds_total"], "generating": generating,
            "stop": median(stops), "sleeps": sleeps}


def main() -> int:
    reason = llama_server.unavailable()
    if reason:
        print(f"bench_real_model: {reason}")
        return 2
    if MODEL != "tiny" and (why := real_models.unavailable(MODEL)):
        print(f"bench_real_model: {why}")
        return 2
    binary = llama_server.binary()
    model = tiny_gguf.tiny_model(seed=0) if MODEL == "tiny" else real_models.path(MODEL)
    runs = runs_arg(10)
    banner(f"the real llama-server ({binary.parent.name}), the {MODEL} model, {runs} drafting calls, {SLEEPS} sleeps")
    calls = per_call(binary, model, runs)
    med = {k: median([c[k] for c in calls]) for k in ("wall", "cpu", "server", "ours", "tokens")}
    spread = statistics.pstdev([c["ours"] for c in calls]) * 1000
    table("per drafting call (median of %d)" % runs, [
        ("wall, the call as the service sees it", f"{med['wall'] * 1000:.0f} ms", "-", None),
        ("the server's own time (timings)", f"{med['server'] * 1000:.0f} ms", "-", None),
        ("the service's own wall (wall - server)", f"{med['ours'] * 1000:.1f} ms (sd {spread:.1f})",
         "<= 5% of the server's", med["ours"] <= 0.05 * med["server"]),
        ("the service's own CPU (this process)", f"{med['cpu'] * 1000:.1f} ms", "<= 5% of the server's",
         med["cpu"] <= 0.05 * med["server"]),
        ("completion tokens", f"{med['tokens']:.0f}", "-", None),
        ("operations read per answer", f"{min(c['ops'] for c in calls)}-{max(c['ops'] for c in calls)}", "1",
         all(c["ops"] == 1 for c in calls)),
    ])
    floor = start_floor(binary, model)
    r = residency(binary, model, SLEEPS)
    table(f"residency with hand-over, {SLEEPS} sleeps of one call (ModelLifecycle on the real binary)", [
        ("up (up_seconds_total)", f"{r['up']:.1f} s", "-", None),
        ("generating (the server's own time)", f"{r['generating']:.1f} s", "-", None),
        ("busy (the calls as the service timed them)", f"{r['busy']:.1f} s", "-", None),
        ("up / generating", f"{r['up'] / r['generating']:.2f}", "-", None),
        ("up / busy", f"{r['up'] / max(r['busy'], 1e-9):.2f}", "-", None),
        ("floor: the server's own start (launch to /health 200)", f"{floor:.2f} s x {SLEEPS}", "-", None),
        ("the hand-over's stop (median)", f"{r['stop']:.2f} s", "< 1 s", r["stop"] < 1.0),
    ])
    return 0


if __name__ == "__main__":
    sys.exit(main())
