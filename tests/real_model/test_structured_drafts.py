"""Drafts that parse, on the real llama-server with the tiny random-weight model (issue 30, item 2).

Random weights write no JSON on their own; held to the answer's schema (model.structured on) every answer is
the shape the prompt asks for, with only the markers shown. The 20 in a row run through the real drafting
path (cycle/drafter.draft_pile on a real Context, the real SerenMemory, the real server): 20 whole sleeps
would take minutes on 2 cores. Three whole sleeps (the service, POST /check) run beside them, and the same
model with model.structured off fails in plain words with nothing submitted.
"""
from __future__ import annotations

import json
import time
from types import SimpleNamespace

import jsonschema
import pytest
import requests

from hippocampus.cycle.drafter import draft_pile
from hippocampus.drafting import schema
from hippocampus.drafting.prompt import Markers
from hippocampus.store import capture

pytestmark = pytest.mark.real_model

MAX_TOKENS = 256
CUT = "before the first operation was complete"
CAPS = (f"cut off at model.max_tokens ({MAX_TOKENS})", "cut off at the pile's answer cap (")    # a pile's own cap


def named_cut(failure: str) -> bool:
    """The cut-off is named: at model.max_tokens, or at the smaller cap sized to its pile."""
    return CUT in failure and any(cap in failure for cap in CAPS)
WORDS = ("the fish dream had a very long tail and a small blue fin that glowed at night while the garden was "
         "quiet after the rain and we talked about the trip to the coast next spring").split()


def model_block(llama, structured: str) -> dict:
    return {"url": llama.url + "/v1", "max_tokens": MAX_TOKENS, "timeout_seconds": 120, "temperature": 0.8,
            "structured": structured}


def pile(i: int, size: int) -> SimpleNamespace:
    topic = f"topic {i}"
    entries = [{"id": f"short-{i}-{k}", "content": " ".join(WORDS[(i + k) % 7:(i + k) % 7 + 9 + k]),
                "metadata": {"ts": 1.76e9 + i * 3600 + k, "topic": topic}} for k in range(size)]
    return SimpleNamespace(topic=topic, entries=entries)


def assert_valid(ops: list, entries: list) -> None:
    """Every operation as Memory will get it: a kind offered, a non-empty content, only the fragments shown,
    no core (none was shown) and a target_op only at an earlier new_core of the same answer."""
    shown = {e["id"] for e in entries}
    for i, op in enumerate(ops):
        assert op["kind"] in ("new_core", "attach", "supersede"), op
        assert op["content"].strip(), op
        assert op["source_short_ids"] and set(op["source_short_ids"]) <= shown, op
        assert op.get("target_core_id") is None, op
        if op["kind"] != "new_core":
            t = op["target_op"]
            assert 0 <= t < i and ops[t]["kind"] == "new_core", op


def test_twenty_drafting_calls_held_to_the_schema_give_only_valid_operations(llama, make_ctx):
    ctx = make_ctx(model=model_block(llama, "on"))
    kept = cut = empty = 0
    started = time.monotonic()
    for i in range(20):
        p = pile(i, 1 + i % 4)
        res = draft_pile(ctx, p, None, "")
        assert_valid(res.operations, p.entries)
        if res.failure:
            assert not res.operations
            assert named_cut(res.failure), res.failure      # named, and nothing half-made passed on
            assert "too low for this model" not in res.failure, res.failure
            cut += 1
        elif res.operations or (res.guard or {}).get("dropped"):
            kept += 1                                       # read as valid (the guard may drop the noise's words)
        else:
            empty += 1                                      # {"operations": []}: nothing to propose
    seconds = time.monotonic() - started
    print(f"20 constrained drafting calls in {seconds:.1f} s: {kept} with operations, {empty} empty, {cut} cut off")
    assert kept >= 3, (kept, empty, cut)


def test_the_same_model_without_the_schema_fails_in_plain_words(llama, make_ctx):
    ctx = make_ctx(model=model_block(llama, "off"))
    failures = []
    for i in range(4):
        p = pile(i, 2)
        res = draft_pile(ctx, p, None, "")
        assert res.operations == [], res.operations
        failures.append(res.failure)
    for why in failures:
        assert why and why.startswith(("the model", "the answer")), why
        assert "Traceback" not in why and "too low for this model" not in why, why
    print("\n".join(failures))


def sleep_once(make_config, start_service, hand, llama, structured: str, seed: int) -> tuple:
    for k in range(3):
        hand.short(" ".join(WORDS[seed + k:seed + k + 10]), topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot", promote=["fish"])
    svc = start_service(make_config(model=model_block(llama, structured)))
    r = requests.post(svc.url + "/check", timeout=180)
    assert r.status_code == 200, r.text
    return svc, r.json()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_whole_sleep_held_to_the_schema_submits_only_valid_operations(make_config, start_service, hand,
                                                                        llama, seed):
    svc, report = sleep_once(make_config, start_service, hand, llama, "on", seed)
    sleep = report["sleep"]
    print(json.dumps({k: sleep.get(k) for k in ("draft_id", "operations", "error", "cut_off", "model_calls")}))
    drafts = hand.drafts()
    if sleep.get("error"):                                 # every pile cut off: named, nothing submitted
        assert named_cut(sleep["error"]), sleep["error"]
        assert drafts == []
        return
    if not sleep.get("draft_id"):
        assert drafts == []                                # the model proposed nothing
        return
    (draft,) = drafts
    shorts = hand.shorts()
    assert_valid(hand.draft(draft["id"])["operations"], shorts)
    packet = capture.store_for(svc.cfg).load(sleep["draft_id"])       # what a replay sends again
    assert [c["response_format"]["type"] for c in packet["calls"]] == ["json_schema"] * len(packet["calls"])


def test_a_whole_sleep_without_the_schema_is_a_model_failure_and_submits_nothing(make_config, start_service,
                                                                                 hand, llama):
    _, report = sleep_once(make_config, start_service, hand, llama, "off", 0)
    error = report["sleep"]["error"]
    assert error.startswith("the model could not draft: "), error          # a sentence, no class name
    assert "too low for this model" not in error
    assert hand.drafts() == []
    assert len(hand.open_briefs()) == 1                   # the brief is kept for the next sleep


@pytest.mark.parametrize("max_tokens", [256, 512, 1024, 2000])
def test_the_longest_answer_the_schema_allows_fits_max_tokens_by_the_servers_own_count(llama, max_tokens):
    """The worst case filled with English words (about 4 characters a token, as the sizing assumes), counted
    by the server's /tokenize, for piles of 1, 4 and 12 fragments and 0, 3 and 8 cores."""
    for n_frag, n_cores in ((1, 0), (4, 3), (12, 8)):
        for redraft in (False, True):
            markers = Markers(fragments={f"f{i}": i for i in range(1, n_frag + 1)},
                              cores={f"c{i}": i for i in range(1, n_cores + 1)})
            sch = schema.answer_schema(markers, max_tokens, redraft=redraft)
            worst = _with_words(schema.worst_case(sch))
            jsonschema.validate(worst, sch)
            text = json.dumps(worst)
            counted = len(requests.post(llama.url + "/tokenize", json={"content": text}, timeout=10).json()["tokens"])
            print(f"max_tokens {max_tokens}, {n_frag} fragments, {n_cores} cores, redraft {redraft}: "
                  f"{len(worst['operations'])} op(s), {counted} tokens")
            assert counted <= max_tokens, (max_tokens, n_frag, n_cores, redraft, counted)


def _with_words(value):
    if isinstance(value, dict):
        return {k: _with_words(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_words(v) for v in value]
    if isinstance(value, str) and value and set(value) == {"x"}:
        text = (" ".join(WORDS) + " ") * (len(value) // 100 + 2)
        return text[:len(value)]
    return value
