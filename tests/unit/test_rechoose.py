"""Extractive redrafts (model.write: extractive), as tables: a denied operation is answered by a choice held by
the schema (withdraw, or the fragment or the critique's own wording whose words become the content, the kind,
the target shown, `also`), and a choice outside what was shown is dropped and named."""
from __future__ import annotations

import json

import jsonschema
import pytest

from hippocampus.drafting import rechoose
from hippocampus.drafting.schema import SHARE, estimate_tokens, worst_case

ENTRIES = [
    {"id": "st-a", "content": "Sam   moved to Lyon in March\nfor the new job.", "metadata": {"ts": 1.76e9}},
    {"id": "st-b", "content": "Dinner with Sam at the bistro, lovely evening.", "metadata": {"ts": 1.76e9 + 60}},
]
CORES = [{"id": "core-paris", "content": "Sam lives in Paris.", "satellites": 3},
         {"id": "core-bistro", "content": "We like the bistro on the corner.", "satellites": 1}]
DENIED = {"index": 2, "kind": "attach", "content": "Dinner with Sam at the bistro, lovely evening.",
          "target_core_id": "core-bistro", "source_short_ids": ["st-b"], "topic": "sam"}
SAY = 'not this; say: "Sam moved to Lyon for the lab job"'


def shown(critique=SAY, op=DENIED, entries=ENTRIES, cores=CORES, earlier=()):
    return rechoose.prompt(voice_block="", critique=critique, op=op, earlier=list(earlier), entries=entries,
                           candidates=cores)


def read(text: str, markers, finish="stop"):
    return rechoose.parse(text, finish_reason=finish, markers=markers, max_tokens=2000, redraft_of=2,
                          core_texts={"c1": CORES[0]["content"], "c2": CORES[1]["content"]})


def choose(*ops) -> str:
    return json.dumps({"operations": list(ops)})


# ---------------------------------------------------------------- the wordings a critique gives

@pytest.mark.parametrize("critique, words", [
    ("say: we walked through the rose garden on sunday", ["we walked through the rose garden on sunday"]),
    ('not quite; say: "The roses bloomed early"', ["The roses bloomed early"]),
    ("Call it “the lab job in Lyon” and attach it to c1", ["the lab job in Lyon"]),
    ("write: Sam starts on Monday.\nand keep the kind", ["Sam starts on Monday."]),
    ("it should read: Sam lives in Lyon now", ["Sam lives in Lyon now"]),
    ("a duplicate of op 0; withdraw it", []),
    ("the date is wrong", []),
    ('say: "42"', []),                                    # no content words: nothing to keep
    ('"Lyon" and "the lab" and "March" and "Sam"', ["Lyon", "the lab", "March"]),    # at most three, in order
    ("", []),
    (None, []),
])
def test_the_wordings_a_critique_gives(critique, words):
    assert rechoose.wordings(critique) == words


# ---------------------------------------------------------------- the prompt

def test_the_prompt_shows_the_critique_the_denied_choice_and_the_critique_s_wording_as_a_choice():
    prompt, markers = shown()
    assert markers.quotes == {"q1": "Sam moved to Lyon for the lab job"}
    assert markers.fragments == {"f1": "st-a", "f2": "st-b"} and markers.cores == {"c1": "core-paris",
                                                                                  "c2": "core-bistro"}
    assert prompt.count(SAY) == 2                                       # before and after the material
    assert '  as a choice: {"words": "f2", "kind": "attach", "target": "c2", "also": []}' in prompt
    assert "[q1] Sam moved to Lyon for the lab job" in prompt
    assert 'to use it: {"words": "q1", "kind": "attach", "target": "c2", "also": ["f2"]}' in prompt
    assert prompt.rstrip().endswith("JSON:") and '"content"' not in prompt     # nothing to write


@pytest.mark.parametrize("critique, op, present, absent", [
    ("the date is wrong", DENIED, ['"words": "f2"'], ["\n[q1]", "Wording the critique gives"]),
    # a denied operation written freely (no fragment's words): no choice to repeat, the content still shown
    ("the date is wrong", {**DENIED, "content": "Sam dined out, 3 times"}, ["content: Sam dined out, 3 times"],
     ["as a choice"]),
    # its target gone from the cores shown: shown with the placeholder, still its marker
    ("say: the bistro dinner", {**DENIED, "target_core_id": "core-gone"},
     ["(the core the denied operation targets)", '"target": "c3"'], []),
    # no fragments left (a sibling's approval took them): the critique's words with no citation
    ("say: the bistro dinner", DENIED, ["(none left", '"also": []'], []),
])
def test_the_prompt_in_each_case(critique, op, present, absent):
    entries = [] if "(none left" in present else ENTRIES
    prompt, _ = shown(critique=critique, op=op, entries=entries)
    for p in present:
        assert p in prompt, p
    for a in absent:
        assert a not in prompt, a


# ---------------------------------------------------------------- the schema

def test_the_schema_allows_a_withdrawal_or_one_choice_of_the_words_shown():
    _, markers = shown(critique='it was "Sam moved to Lyon for the lab job", unless that is a duplicate')
    schema = rechoose.schema(markers, 2000)
    for good in ([], [{"words": "q1", "kind": "attach", "target": "c2", "also": ["f2"]}],
                 [{"words": "f1", "kind": "new_core", "target": None, "also": []}]):
        jsonschema.validate({"operations": good}, schema)
    bad = [
        [{"words": "q2", "kind": "new_core", "target": None, "also": []}],            # no such wording
        [{"words": "f3", "kind": "new_core", "target": None, "also": []}],            # no such fragment
        [{"words": "f1", "kind": "supersede", "target": "c3", "also": []}],           # no such core
        [{"words": "f1", "kind": "attach", "target": None, "also": []}],              # attach needs a target
        [{"words": "f1", "kind": "new_core", "target": None, "also": ["q1"]}],        # a wording cites nothing
        [{"words": "f1", "kind": "new_core", "target": None, "also": [], "content": "Sam is 40"}],   # no writing
        [{"words": "f1", "kind": "new_core", "target": None, "also": []}] * 2,        # one choice at most
    ]
    for ops in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"operations": ops}, schema)


@pytest.mark.parametrize("max_tokens", [16, 60, 200, 2000])
def test_the_longest_answer_the_schema_allows_fits_the_budget_where_it_can(max_tokens):
    _, markers = shown()
    schema = rechoose.schema(markers, max_tokens)
    worst = estimate_tokens(worst_case(schema))
    least = estimate_tokens(worst_case(rechoose._schema(["f1", "f2", "q1"], ["f1", "f2"], ["c1", "c2"], 0)))
    assert worst <= max(int(max_tokens * SHARE), least)


def test_nothing_to_choose_from_allows_only_a_withdrawal():
    _, markers = shown(critique="no", entries=[])
    schema = rechoose.schema(markers, 2000)
    jsonschema.validate({"operations": []}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"operations": [{"words": "f1", "kind": "new_core", "target": None, "also": []}]}, schema)


# ---------------------------------------------------------------- reading the answer

CHOICES = [
    # (the answer's choices, the operations read as (kind, content, target, sources), the drops named)
    ([], [("attach", "Sam moved to Lyon for the lab job", "core-bistro", ["st-b"])], []),   # a withdrawal, not offered
    ([{"words": "q1", "kind": "attach", "target": "c2", "also": ["f2"]}],
     [("attach", "Sam moved to Lyon for the lab job", "core-bistro", ["st-b"])], []),
    ([{"words": "q1", "kind": "new_core", "target": None, "also": []}],
     [("new_core", "Sam moved to Lyon for the lab job", None, [])], []),
    ([{"words": "f1", "kind": "supersede", "target": "[c1]", "also": ["f2"]}],
     [("supersede", "Sam moved to Lyon in March for the new job.", "core-paris", ["st-a", "st-b"])], []),
    ([{"words": 1, "kind": "new_core", "target": "none", "also": "f1"}],
     [("new_core", "Sam moved to Lyon in March for the new job.", None, ["st-a"])], []),
    ([{"words": "q7", "kind": "new_core", "target": None, "also": []}], [], ["op 0: chooses words it was not shown"]),
    ([{"words": "f1", "kind": "attach", "target": "c9", "also": []}], [], ["op 0: attach of a core it was not shown"]),
    ([{"words": "f1", "kind": "attach", "target": None, "also": []}], [], ["op 0: attach without a target"]),
    ([{"words": "f1", "kind": "new_core", "target": None, "also": ["f8"]}], [],
     ["op 0: cites a fragment it was not shown"]),
    ([{"words": "f1", "kind": "verbatim", "target": None, "also": []}], [], ["op 0: unknown kind"]),
    ([{"kind": "new_core", "content": "Sam is 41 and lives in Rome", "fragments": ["f1"]}], [],
     ["op 0: chooses words it was not shown"]),                                       # written, not chosen
    ([{"words": "q1", "kind": "new_core", "target": None, "also": []},
      {"words": "f1", "kind": "new_core", "target": None, "also": []}],
     [("new_core", "Sam moved to Lyon for the lab job", None, [])], ["op 1: a redraft answers with one choice"]),
]


@pytest.mark.parametrize("choices, ops, dropped", CHOICES)
def test_a_choice_becomes_an_operation_in_words_shown_or_is_dropped_and_named(choices, ops, dropped):
    _, markers = shown()
    parsed = read(choose(*choices), markers)
    assert parsed.failure is None
    assert [(o["kind"], o["content"], o.get("target_core_id"), o["source_short_ids"]) for o in parsed.operations] == ops
    assert all(o["redraft_of"] == 2 and "chosen, not written" in o["rationale"] for o in parsed.operations)
    assert len(parsed.dropped) == len(dropped) and all(d.startswith(w) for d, w in zip(parsed.dropped, dropped))


def test_a_new_core_restating_a_shown_core_is_dropped():
    _, markers = shown(critique='say: "sam lives in paris"')
    parsed = read(choose({"words": "q1", "kind": "new_core", "target": None, "also": []}), markers)
    assert parsed.operations == [] and parsed.dropped == ["op 0: a new_core that restates a shown core"]


@pytest.mark.parametrize("text, finish, failure", [
    ('{"words": "q1", "kind": "new_core", "target": null, "also": []}', "stop", None),   # one choice on its own
    ("no JSON here", "stop", "not the JSON asked for"),
    ('{"operations": [{"words": "q1", "kind": "new_co', "length", "max_tokens"),
])
def test_an_answer_is_read_once_the_way_the_draft_reads_one(text, finish, failure):
    _, markers = shown()
    parsed = rechoose.parse(text, finish_reason=finish, markers=markers, max_tokens=30)
    if failure is None:
        assert parsed.failure is None and [o["content"] for o in parsed.operations] == [markers.quotes["q1"]]
    else:
        assert parsed.operations == [] and failure in (parsed.failure or ""), parsed


@pytest.mark.parametrize("critique, withdraw", [
    ("not quite; say: The roses bloomed early", False),       # the critique says what to say: it is said
    ('say: "The roses bloomed early"', False),
    ('a duplicate of "The roses bloomed early"', True),        # quoted words, but no word to say them
    ("a duplicate; withdraw it", True),
    ('say: "42"', True),                                       # nothing to say
])
def test_a_critique_that_says_what_to_say_is_not_answered_by_a_withdrawal(critique, withdraw):
    prompt, markers = shown(critique=critique)
    assert markers.withdraw is withdraw
    schema = rechoose.schema(markers, 2000)
    assert ("withdrawing is not offered" in prompt) is not withdraw
    if withdraw:
        jsonschema.validate({"operations": []}, schema)
    else:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"operations": []}, schema)


@pytest.mark.parametrize("answer", ['{"operations": []}', '{"withdraw": true}'])
def test_a_withdrawal_not_offered_is_read_as_the_critique_s_own_words(answer):
    """Found: a server not held to the schema (or model.structured off) let the model withdraw an operation whose
    critique said what to say, and the reviewer's wording left the chain. It is said instead, as the prompt's
    'to use it' line has it (README: such a critique is not answered by a withdrawal)."""
    critique = 'Too thin: it is our "bistro"; say: Dinner with Sam at the bistro on the corner'
    _, markers = shown(critique=critique)
    assert markers.withdraw is False
    parsed = read(answer, markers)
    assert parsed.failure is None
    assert [(o["kind"], o["content"], o.get("target_core_id"), o["source_short_ids"], o["redraft_of"])
            for o in parsed.operations] == [
        ("attach", "Dinner with Sam at the bistro on the corner", "core-bistro", ["st-b"], 2)]
    _, offered = shown(critique="a duplicate of op 0; withdraw it")
    assert read('{"operations": []}', offered).operations == []          # where it is offered, it stands
