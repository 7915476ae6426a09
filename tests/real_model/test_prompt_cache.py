"""The prompt evaluated once (issue 40), on the real llama-server with the real SmolLM2-135M-Instruct, the real
SerenMemory and the service: over one night of the corpus (night 1, five piles) the prompt tokens the server
evaluated are at most half of the prompts' tokens, read from the server's own `timings` of each call, which the
sleep's report sums. Every drafting prompt of a night begins with the same head (voice card, rules, the answer's
shape, the brief) and the server, asked to keep its cache, evaluates only what follows it from the second pile on.
"""
from __future__ import annotations

import time

import requests

from hippocampus import config as cm
from tests.corpus import load, place
from tests.harness.llama_server import LlamaServer

SEED = 7


def service_config(memory_url: str, model_url: str, state: str):
    cfg = cm.build({"memory": {"url": memory_url},
                    "model": {"url": model_url, "name": "real", "max_tokens": 256, "temperature": 0,
                              "timeout_seconds": 120, "structured": "on", "write": "extractive",
                              "extra_body": {"seed": SEED}},
                    "sleep": {"mode": "external", "state_path": state, "promote_min_evidence": 1,
                              "max_attempts": 1, "brief_request": False}}, environ={})
    assert not cfg.warnings, cfg.warnings
    cfg.server.port = 0
    return cfg


def test_a_nights_shared_head_is_evaluated_once(llama_binary, smollm2_model, memory, hand, tmp_path):
    from hippocampus.service.root import Service

    night = load().nights[0]
    llama = LlamaServer(llama_binary, smollm2_model, "-c", "4096", "--seed", str(SEED), threads=2,
                        log_dir=tmp_path / "llama").start(timeout=120)
    svc = Service(service_config(memory.url, llama.url + "/v1", str(tmp_path / "state" / "state.json")))
    svc.start()
    svc.serve_in_thread()
    try:
        place(hand, night, time.time())
        t0 = time.monotonic()
        report = requests.post(svc.url + "/sleep", timeout=300).json()
        seconds = time.monotonic() - t0
    finally:
        svc.request_stop(drain_seconds=5)
        svc.wait_stopped(30)
        llama.stop()
    tokens = report.get("tokens") or {}
    print(f"\nSmolLM2, {night.label}: {report.get('piles')} piles, {report.get('model_calls')} calls in "
          f"{seconds:.1f} s; tokens {tokens}")
    assert report.get("model_calls", 0) >= 3, report
    assert tokens.get("timed") == report["model_calls"], tokens      # the server counted every call
    assert tokens["prompt"] == tokens["evaluated"] + tokens["cached"] and tokens["answer"] > 0
    assert tokens["evaluated"] <= tokens["prompt"] / 2, tokens
