"""Did-you-mean for a person's typos and misplaced keys, against the real config's settings."""
from __future__ import annotations

import pytest

from hippocampus import config as cm
from hippocampus.config.suggest import unknown_key_line


@pytest.mark.parametrize("given,meant", [
    ("sever", "server"),
    ("server.prot", "server.port"),
    ("sleep.intervl_seconds", "sleep.interval_seconds"),
    ("server.bearer_tokn", "server.bearer_token"),
    ("model.lifecycle.max_tokens", "model.max_tokens"),       # misplaced: today's message
])
def test_a_typo_or_a_misplaced_key_names_the_setting_it_meant(given, meant):
    line = unknown_key_line(given, cm._all_paths(cm.Config))
    assert line == f"'{given}' is not a setting and was ignored - did you mean {meant}?"


def test_a_word_that_is_nothing_like_a_setting_gets_no_guess():
    assert unknown_key_line("sleep.banana_split", cm._all_paths(cm.Config)) == \
        "'sleep.banana_split' is not a setting and was ignored"


def test_a_swapped_pair_of_letters_is_one_slip_away():
    # was a test of the hand-written edit distance (now difflib's ratio): the same promise, through the line
    for given, meant in (("sleep.tcik_seconds", "sleep.tick_seconds"), ("server.prot", "server.port"),
                         ("sleep.intervl_seconds", "sleep.interval_seconds")):
        assert unknown_key_line(given, cm._all_paths(cm.Config)).endswith(f"did you mean {meant}?")
