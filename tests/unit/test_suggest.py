"""Did-you-mean for a person's typos and misplaced keys, against the real config's settings."""
from __future__ import annotations

import pytest

from hippocampus import config as cm
from hippocampus.config.suggest import distance, unknown_key_line


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


def test_distance_counts_a_swap_as_one_edit():
    assert distance("prot", "port") == 1
    assert distance("intervl_seconds", "interval_seconds") == 1
    assert distance("abc", "abc") == 0
