"""The context fit on the real llama-server: a server started with too small a context is named, with its real
numbers and the fix, on /status and by check-config before any sleep runs; a sleep against it fails with the
plain sentence, never the server's JSON; with a context big enough nothing is said."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import requests

from hippocampus.model import fit
from hippocampus.status.words import keyless
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.real_model
ROOT = Path(__file__).resolve().parents[2]
MAX_TOKENS = 1024


def model_block(srv, max_tokens: int = MAX_TOKENS) -> dict:
    # free: the largest prompt (the one the fit measures) is the free drafting prompt; auto would choose the
    # shorter extractive prompt for this tiny model, which fits the 512-token context the test starts
    return {"url": srv.url + "/v1", "max_tokens": max_tokens, "timeout_seconds": 60, "write": "free"}


def servers_count(srv, cfg) -> int:
    """What the server itself counts for the largest prompt: the n_prompt_tokens of its refusal, or the
    prompt_tokens of its answer (one token long) when it takes it."""
    r = requests.post(srv.url + "/v1/chat/completions", timeout=60, json={
        "messages": [{"role": "user", "content": fit.largest_pile(cfg)[0]}], "max_tokens": 1})
    if r.status_code == 400:
        return r.json()["error"]["n_prompt_tokens"]
    assert r.status_code == 200, r.text
    return r.json()["usage"]["prompt_tokens"]


def status(svc) -> dict:
    r = requests.get(svc.url + "/status", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def context_row(st: dict) -> list:
    return next((row for row in st["say"]["cards"]["model"]["rows"] if row[0] == "context"), None)


def check_config(tmp_path, memory_url: str, srv, max_tokens: int = MAX_TOKENS) -> subprocess.CompletedProcess:
    path = tmp_path / "check.yaml"
    path.write_text(f"memory:\n  url: {memory_url}\nmodel:\n  url: {srv.url}/v1\n  max_tokens: {max_tokens}\n"
                    f"sleep:\n  state_path: {tmp_path / 'check-state' / 'state.json'}\n")
    return subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--config", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_a_prompt_that_cannot_fit_is_named_before_any_sleep_and_the_sleep_fails_in_plain_words(
        start_llama, make_config, start_service, hand, memory, tmp_path):
    srv = start_llama("-c", "512")
    cfg = make_config(model=model_block(srv))
    counted = servers_count(srv, cfg)
    assert counted > 512
    svc = start_service(cfg)

    wait_for(lambda: "context" in status(svc)["say"]["headline"], timeout=30, what="the fit on /status")
    st = status(svc)
    assert st["last_sleep"] is None                          # before any sleep
    headline = st["say"]["headline"]
    assert st["say"]["level"] == "bad"
    expected = (f"the largest prompt a sleep can send (a full pile) is {counted:,} tokens and model.max_tokens is "
                f"1,024, but the server's context is 512 tokens: start the server with "
                f"-c {fit.context_needed(counted, MAX_TOKENS)} or more, or lower model.max_tokens / sleep.pile_max")
    assert keyless(expected) in headline                     # the person's headline says the settings in words
    assert expected in st["say"]["details"]                  # and the details view keeps their keys
    assert context_row(st) == ["context", "see above", "bad"]
    assert st["model_fit"]["n_ctx"] == 512 and st["model_fit"]["prompt_tokens"] == counted

    done = check_config(tmp_path, memory.url, srv)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"warning: the model's context is too small: {expected}" in done.stdout.splitlines()

    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    r = requests.post(svc.url + "/check", timeout=120)
    assert r.status_code == 200, r.text
    error = status(svc)["last_sleep"]["error"]
    assert "the model server refused the prompt: the prompt is " in error
    assert "but the server's context is 512 tokens: start the server with -c " in error
    assert "{" not in error and "exceed_context_size_error" not in error
    print(f"the largest prompt: {counted} tokens; the sleep's error: {error}")


def test_a_context_big_enough_says_nothing(start_llama, make_config, start_service, memory, tmp_path):
    # the tiny model was trained on 4,096 tokens and llama-server gives it no more, whatever -c asks for:
    # the context read is the server's, so the answer's cap is what makes room here
    srv = start_llama("-c", "4096")
    cfg = make_config(model=model_block(srv, max_tokens=512))
    assert servers_count(srv, cfg) + 512 <= 4096
    svc = start_service(cfg)
    wait_for(lambda: context_row(status(svc)) is not None, timeout=30, what="the context row")
    st = status(svc)
    row = context_row(st)
    assert row[0] == "context" and row[1].startswith("4,096 tokens: the largest prompt (") and row[2] == "good"
    assert st["say"]["level"] != "bad" and "context" not in st["say"]["headline"], st["say"]["headline"]

    done = check_config(tmp_path, memory.url, srv, max_tokens=512)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no warnings" in done.stdout and not [ln for ln in done.stdout.splitlines() if ln.startswith("warning:")]
    assert "# model context: 4,096 tokens: the largest prompt (" in done.stdout
