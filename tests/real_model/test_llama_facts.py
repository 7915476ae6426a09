"""What the real llama-server does, asserted on the binary built from llama.cpp's source, so that a later
llama.cpp that behaves differently (a new error shape, a moved key, a slower stop) fails here first, not in
the service. The model is the tiny random-weight one: it talks nonsense, but the shapes are the real ones.
"""
from __future__ import annotations

import json

import jsonschema
import pytest
import requests

pytestmark = pytest.mark.real_model

OPERATIONS = {
    "type": "object",
    "properties": {
        "operations": {
            "type": "array", "minItems": 1, "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"op": {"enum": ["promote", "merge", "drop"]},
                               "id": {"type": "string", "maxLength": 12}},
                "required": ["op", "id"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["operations"],
    "additionalProperties": False,
}


def chat(llama, content: str, **body) -> requests.Response:
    return requests.post(llama.url + "/v1/chat/completions", timeout=60,
                         json={"messages": [{"role": "user", "content": content}], **body})


def tokens(llama, text: str) -> list[int]:
    answer = requests.post(llama.url + "/tokenize", json={"content": text}, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["tokens"]


def test_health_is_503_loading_model_then_200_ok(start_llama):
    srv = start_llama("-c", "512", wait=False)
    seen = srv.wait_ready(timeout=60)           # polled from the moment the process starts
    *loading, ready = seen
    for answer in loading:                      # a 5 MB model loads fast: the 503 may be missed
        assert answer.status_code == 503
        assert answer.json() == {"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}}
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok"}
    print(f"/health answered 503 'Loading model' {len(loading)} time(s) before 200")


def test_props_tells_the_context_size(llama):
    props = requests.get(llama.url + "/props", timeout=10).json()
    assert props["default_generation_settings"]["n_ctx"] == 2048       # the key the service reads
    assert props["total_slots"] == 1


def test_tokenize_counts_a_prompts_tokens(llama):
    one = tokens(llama, "The garden was quiet after the rain.")
    assert one and all(isinstance(t, int) for t in one)
    two = tokens(llama, "The garden was quiet after the rain. " * 2)
    assert len(one) < len(two) <= 2 * len(one) + 1


def test_chat_completion_answers_in_the_openai_shape(llama):
    answer = chat(llama, "Say hello.", max_tokens=16, seed=1)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["object"] == "chat.completion"
    (choice,) = body["choices"]
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] in ("stop", "length")
    usage = body["usage"]
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    if choice["finish_reason"] == "length":
        assert usage["completion_tokens"] == 16
    else:
        assert usage["completion_tokens"] <= 16


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_json_schema_response_format_holds_even_random_weights_to_the_schema(llama, seed):
    max_tokens = 400
    answer = chat(llama, "List the operations for tonight as JSON.", max_tokens=max_tokens, seed=seed,
                  response_format={"type": "json_schema", "json_schema": {"schema": OPERATIONS}})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    choice = body["choices"][0]
    content = choice["message"]["content"]
    if choice["finish_reason"] == "length":     # the grammar fixes the shape, not the length
        assert body["usage"]["completion_tokens"] == max_tokens
        pytest.fail(f"seed {seed}: cut off at max_tokens={max_tokens} before the JSON closed: {content[:200]!r}")
    assert choice["finish_reason"] == "stop"
    jsonschema.validate(json.loads(content), OPERATIONS)
    print(f"seed {seed}: {body['usage']['completion_tokens']} tokens: {content}")


def test_a_prompt_longer_than_the_context_is_refused_with_400_exceed_context_size(llama):
    prompt = "The garden was quiet after the rain. " * 400
    counted = len(tokens(llama, prompt))
    assert counted > 2048
    answer = chat(llama, prompt, max_tokens=8)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == 400
    assert error["type"] == "exceed_context_size_error"
    assert error["n_ctx"] == 2048
    assert error["n_prompt_tokens"] >= counted                  # the chat template adds its own tokens
    assert f"({error['n_prompt_tokens']} tokens) exceeds the available context size (2048 tokens)" \
        in error["message"]


def test_sigterm_on_an_idle_server_exits_0_within_a_second(start_llama):
    srv = start_llama("-c", "512", "--seed", "1")
    assert chat(srv, "Say hello.", max_tokens=4).status_code == 200      # idle after real work
    code, seconds = srv.stop(timeout=5)
    assert code == 0
    assert seconds < 1.0
    print(f"SIGTERM to exit 0 in {seconds:.3f} s")
