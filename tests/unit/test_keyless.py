"""The person's sentence names no config key (issue 41, item 3): a parenthesis of keys is left out, a key in
the sentence is said as a setting, a snake_case name in words; a URL or a path is never touched."""
from __future__ import annotations

import pytest

from hippocampus.status.words import keyless

CASES = [
    ("the model at http://x/v1 did not answer within 1 s (model.timeout_seconds)",
     "the model at http://x/v1 did not answer within 1 s"),
    ("answered an HTML page: point memory.url at SerenMemory", "answered an HTML page: point the memory url setting "
                                                               "at SerenMemory"),
    ("model.lifecycle.manage is off: name model.lifecycle.server + model_path (or a start line)",
     "the model manage setting is off: name the model server setting + model path (or a start line)"),
    ("the state file /var/lib/seren_hippo/state.json at http://h:1/some_route?x_y=1 is fine",
     "the state file /var/lib/seren_hippo/state.json at http://h:1/some_route?x_y=1 is fine"),
    ("", ""),
]


@pytest.mark.parametrize("text,said", CASES)
def test_a_sentence_in_a_persons_words(text, said):
    assert keyless(text) == said
