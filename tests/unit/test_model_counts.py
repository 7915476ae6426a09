"""A model server whose counts are not numbers (NaN, Infinity: Python's json reads both) still answers the call:
those counts are left out, as a server's that says none, and the sleep goes on."""
from __future__ import annotations

import pytest

from hippocampus.config import ModelConfig
from hippocampus.model import size, timings
from hippocampus.model.client import ModelClient
from hippocampus.model.learned import Learned


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_call_whose_token_counts_are_not_numbers_is_still_answered(fake_model, bad):
    fake_model.replies = [{"content": '{"operations": []}',
                           "timings": {"prompt_n": bad, "cache_n": 3, "predicted_n": bad}}]
    answer = ModelClient(ModelConfig(url=fake_model.url)).chat("hello")
    assert answer.text == '{"operations": []}'
    assert answer.timings == timings.read({"usage": answer.usage})     # its usage counts, as a server's without


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_size_that_is_not_a_number_is_a_server_that_does_not_say(fake_model, bad):
    fake_model.meta = {"n_params": bad}            # GET /v1/models: {"data": [{"meta": {"n_params": NaN}}]}
    pick = size.mode_for("auto", fake_model.url, Learned())
    assert pick["mode"] == "free" and pick["n_params"] is None
