"""One rule for each small thing (issue 42): yes and no are read one way by the config, the environment, the
command line, MCP's arguments and HTTP's query flags; a caller's text is escaped one way in every log line."""
from __future__ import annotations

import argparse
import logging

import pytest

from hippocampus import config as cm
from hippocampus.words import escape_controls, yes_no

WORDS = [("true", True), ("Yes", True), (" on ", True), ("1", True), ("y", True), ("T", True),
         ("false", False), ("NO", False), ("off", False), ("0", False), ("n", False), ("f", False)]
NOT_WORDS = ["maybe", "2", "", "truthy", "-1"]


@pytest.mark.parametrize("word,meant", WORDS)
def test_every_reader_takes_the_same_yes_and_no(word, meant):
    from hippocampus.cli.flags import _on_off
    from hippocampus.mcp.server import arguments

    assert yes_no(word) is meant
    cfg = cm.build({"sleep": {"brief_pull": word}}, environ={})
    assert cfg.sleep.brief_pull is meant and not cfg.warnings
    cfg = cm.build({}, environ={"SEREN_HIPPOCAMPUS_SLEEP_BRIEF_PULL": word})
    assert cfg.sleep.brief_pull is meant and not cfg.warnings
    assert _on_off(word) is meant

    def tool(flag=False):
        return flag
    tool.__annotations__ = {"flag": bool}       # a real bool, not the string this module's annotations make
    assert arguments(tool, {"flag": word}) == {"flag": meant}


@pytest.mark.parametrize("word", NOT_WORDS)
def test_every_reader_refuses_the_same_other_words(word):
    from hippocampus.cli.flags import _on_off
    from hippocampus.mcp.server import ArgumentError, arguments

    assert yes_no(word) is None
    cfg = cm.build({"sleep": {"brief_pull": word}}, environ={})
    assert cfg.sleep.brief_pull is False and any("brief_pull" in w for w in cfg.warnings)
    with pytest.raises(argparse.ArgumentTypeError):
        _on_off(word)

    def tool(flag=False):
        return flag
    tool.__annotations__ = {"flag": bool}       # a real bool, not the string this module's annotations make
    with pytest.raises(ArgumentError):
        arguments(tool, {"flag": word})


def test_a_bool_and_zero_or_one_are_yes_and_no_a_float_is_not():
    assert (yes_no(True), yes_no(False), yes_no(1), yes_no(0)) == (True, False, True, False)
    assert yes_no(2) is None and yes_no(1.0) is None and yes_no(None) is None and yes_no([]) is None


def test_the_tristate_model_structured_takes_the_same_yes_and_no():
    for word, meant in WORDS:
        cfg = cm.build({"model": {"structured": word}}, environ={})
        assert cfg.model.structured == ("on" if meant else "off"), word


def test_the_one_escape_keeps_letters_and_escapes_controls_and_the_backslash():
    assert escape_controls("sleep_now") == "sleep_now"
    assert escape_controls("café ☃ 東京") == "café ☃ 東京"
    assert escape_controls("a\nb\x1b[31mc\\nd\u2028e\x85") == "a\\nb\\x1b[31mc\\\\nd\\u2028e\\x85"


def test_an_mcp_tool_name_with_controls_is_one_log_line_escaped_as_http_escapes(caplog):
    """The MCP server's log line for an unknown tool and the HTTP request line escape alike (one function)."""
    from hippocampus.http import auth
    from hippocampus.mcp import server

    assert server.escape_controls is auth.escape_controls is escape_controls
    with caplog.at_level(logging.INFO, logger="hippocampus.mcp"):
        line = server._short("a forged\\nline \x1b[2J")
    assert line == "a forged\\\\nline \\x1b[2J"
