"""A NUL character (yaml's "\\0") in a text setting: no path, URL, command or name can hold one, so the loader
says so and keeps the default; check-config printed a traceback (ValueError: embedded null byte) for one in
sleep.state_path, ripple.command or ripple.run_as."""
from __future__ import annotations

import pytest

from hippocampus import config as cm

NUL_WORDS = "holds a NUL character (\\0), which no path, URL, command or name can hold"


@pytest.mark.parametrize("block, key, value", [("sleep", "state_path", "/tmp/a\0b/state.json"),
                                               ("ripple", "command", ["cl\0aude", "-p"]),
                                               ("ripple", "run_as", "ro\0ot"),
                                               ("model", "url", "http://a\0b:8080/v1")])
def test_a_nul_in_a_text_setting_is_a_warning_and_the_default_stays(block, key, value):
    cfg = cm.build({block: {key: value}}, environ={})
    default = getattr(getattr(cm.Config(), block), key)
    assert getattr(getattr(cfg, block), key) == default
    assert cfg.warnings == [f"'{block}.{key}' = {value!r} {NUL_WORDS}; using the default {default!r}"]


def test_check_config_says_it_and_prints_no_traceback(tmp_path, capsys):
    from hippocampus.__main__ import main

    path = tmp_path / "h.yaml"
    path.write_text('sleep:\n  state_path: "/tmp/a\\0b/state.json"\nripple:\n  type: script\n'
                    '  command: ["cl\\0aude", "-p"]\n  run_as: "ro\\0ot"\n', encoding="utf-8")
    assert main(["check-config", "--config", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count(NUL_WORDS) == 3, out


def test_a_nul_in_a_replay_candidates_url_leaves_it_out_in_the_same_words_as_model_url():
    """Found: model.url with a NUL is refused at load, but replay.candidates.X.url with one was listed: a replay
    asked for it failed at the call instead."""
    from hippocampus.config.replay_endpoints import listed

    url = "http://127.0.0.1:8091/v\x001"
    cfg = cm.build({"replay": {"candidates": {"a": {"url": url}}}}, environ={})
    assert cfg.warnings == [f"'replay.candidates.a.url' = {url!r} {NUL_WORDS}; the candidate is left out"]
    assert listed(cfg) == {}
