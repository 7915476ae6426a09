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


def test_where_the_schema_says_boolean_only_true_and_false_in_any_case():
    """HTTP's query flags: the OpenAPI document says boolean, so 1 and yes are refused (400), TRUE is not."""
    from hippocampus.words import BOOLEAN

    assert (yes_no("TRUE", BOOLEAN), yes_no(" false", BOOLEAN)) == (True, False)
    assert yes_no("1", BOOLEAN) is yes_no("yes", BOOLEAN) is yes_no("", BOOLEAN) is yes_no(1, BOOLEAN) is None


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


def test_the_one_clock_says_hh_mm_and_hands_the_viewer_each_time_it_said():
    import time

    from hippocampus.words import hhmm, times_said

    at = time.mktime((2026, 12, 5, 7, 4, 59, 0, 0, -1))
    with times_said() as said:
        assert hhmm(at) == "07:04" and hhmm(at, day=True) == "2026-12-05 07:04"
        assert hhmm(None) == hhmm(0) == hhmm(1e300) == hhmm("soon") == "?"
    assert said == {"07:04": at}                 # the viewer rewrites "07:04" in the person's own clock
    assert hhmm(at) == "07:04"                   # outside a collection nothing is kept


def test_busy_is_one_sentence_in_the_409_the_mcp_answer_and_the_headline():
    import time

    from hippocampus.cycle.lock import Busy
    from hippocampus.mcp.tools import Tools
    from hippocampus.status.narrator import narrate
    from hippocampus.words import busy, hhmm

    since = time.time() - 60
    sentence = busy("sleep", since)
    assert sentence == f"a sleep is running since {hhmm(since)}"
    assert str(Busy("sleep", since)) == f"busy: {sentence}"

    class Front:
        def sleep(self, without_brief):
            raise Busy("sleep", since)
    out = Tools(Front()).sleep_now()
    assert out["busy"] is True and out["message"].startswith(sentence + "; nothing was started")
    said = narrate({"memory": {"reachable": True}, "busy": {"what": "sleep", "since": since}}, time.time())
    assert said["headline"] == "A" + sentence[1:] + "."


def test_asked_for_a_brief_and_another_copy_are_one_sentence_each():
    from hippocampus.cycle import claims
    from hippocampus.status.lists import result
    from hippocampus.status.narrator import headline
    from hippocampus.words import ASKED_FOR_BRIEF, another_copy

    assert result("sleep", {"asked_for_brief": True})["text"] == "N" + ASKED_FOR_BRIEF[1:] + "."
    other = {"pid": 41, "host": "box", "folder": "/s", "what": "sleeps on brief b1"}
    assert claims.sentence(other) == another_copy(other) == \
        "another copy of seren-hippocampus (pid 41 on box, state folder /s) sleeps on brief b1"
    said, _, _ = headline({"memory": {"reachable": True}, "last_check": {"status": "other_copy", "other": other}}, 0)
    assert said.startswith("A" + another_copy(other)[1:] + ": this copy leaves it to that one")
    assert another_copy({}) == "another copy of seren-hippocampus works on this Memory"
