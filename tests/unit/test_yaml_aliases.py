"""YAML aliases bounded (issue 38, 12): an alias bomb in the config is a yaml error naming its key, refused in well
under a second and in little memory; a recursive alias too; an ordinary alias still works."""
from __future__ import annotations

import time
import tracemalloc

import pytest

from hippocampus.config import loader
from tests.service.test_untrusted_state import bomb


@pytest.mark.parametrize("key", ["model.extra_body", "ripple.messages"])
def test_an_alias_bomb_is_a_yaml_error_naming_its_key_fast_and_small(tmp_path, key):
    path = tmp_path / "seren-hippocampus.yaml"
    path.write_text(bomb(key), encoding="utf-8")
    loader._read_yaml(str(path), [])                # the parser's imports, once, outside the measure
    tracemalloc.start()
    t0 = time.perf_counter()
    warnings: list = []
    try:
        data = loader._read_yaml(str(path), warnings)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    refused = data == {}                # compared here: pytest's report would walk a bomb that was loaded
    assert refused and len(warnings) == 1, warnings
    assert f"{path} is not valid yaml ({key}: too many aliases (a YAML alias bomb?)" in warnings[0], warnings
    assert took < 1.0 and peak < 20 * 2**20, (took, peak)


def test_a_recursive_alias_is_refused_naming_its_key(tmp_path):
    path = tmp_path / "h.yaml"
    path.write_text("model:\n  extra_body:\n    loop: &a [1, *a]\n", encoding="utf-8")
    warnings: list = []
    assert loader._read_yaml(str(path), warnings) == {}
    assert "model.extra_body: too many aliases" in warnings[0] and "recursive" in warnings[0], warnings


def test_an_ordinary_alias_still_works(tmp_path):
    path = tmp_path / "h.yaml"
    path.write_text("model:\n  extra_body: &body {chat_template_kwargs: {enable_thinking: false}, top_k: 20}\n"
                    "ripple:\n  messages: {wake: *body}\n", encoding="utf-8")
    cfg = loader.load(str(path), environ={}, announce=False)
    assert not [w for w in cfg.warnings if "alias" in w], cfg.warnings
    assert cfg.model.extra_body["top_k"] == 20
