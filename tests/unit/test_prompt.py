import os

import pytest

from hippocampus.drafting.prompt import (ANSWER_FORMAT, DRAFT_RULES, EXTRACT_FORMAT, EXTRACT_RULES, REDRAFT_RULES,
                                         Markers, Steer, draft_prompt, extract_prompt, redraft_prompt)

TS = 1767225600.0  # 2026-01-01 UTC


def entry(i, content, ts=TS):
    return {"id": f"short-{i}", "content": content, "metadata": {"topic": "fish", "ts": ts}}


CORES = [{"id": "core-aaa", "content": "Likes fish.", "topic": "fish", "satellites": 2, "via": None},
         {"id": "core-bbb", "content": "Dreams of the sea.", "topic": "sea", "satellites": 0,
          "via": "dreamt of waves " * 30}]


def test_draft_contract_lines():
    p, m = draft_prompt(voice_block="", steer=None, topic="fish",
                        entries=[entry(1, "text"), entry(2, "line one\nline two", ts=None)], candidates=CORES)
    lines = p.split("\n")
    assert "[f1] text (2026-01-01)" in lines
    assert any(line.startswith("[f2] line one line two (") for line in lines)
    assert "[c1] Likes fish. (2 satellites)" in lines
    assert "[c2] Dreams of the sea. (0 satellites)" in lines
    via = lines[lines.index("[c2] Dreams of the sea. (0 satellites)") + 1]
    assert via.startswith("    one of its episodes: dreamt of waves")
    assert len(via) == len("    one of its episodes: ") + 200
    assert m == Markers(fragments={"f1": "short-1", "f2": "short-2"}, cores={"c1": "core-aaa", "c2": "core-bbb"},
                        entries={"f1": entry(1, "text"), "f2": entry(2, "line one\nline two", ts=None)})
    assert "Topic: fish" in lines and "Steer:" not in lines
    assert lines[-1] == "JSON:"
    assert '"fragments": ["f1", "f3"]' in p and '"target": "c2" or null' in p and '"verbatim"' not in p
    order = [p.index(s) for s in ('{"operations"', "Topic: fish", "Fragments:", "Existing cores:", "JSON:")]
    assert order == sorted(order)


def test_fragment_and_core_chars_cut():
    p, _ = draft_prompt(voice_block="", steer=None, topic=None, entries=[entry(1, "a" * 1000)],
                        candidates=[{"id": "c", "content": "b" * 1000, "satellites": 1}], core_chars=150)
    assert f"[f1] {'a' * 400} (2026-01-01)" in p.split("\n")
    assert f"[c1] {'b' * 150} (1 satellites)" in p.split("\n")
    assert "Topic: untagged" in p


def test_no_candidates_reads_none():
    p, m = draft_prompt(voice_block="", steer=None, topic="x", entries=[entry(1, "t")], candidates=[])
    lines = p.split("\n")
    assert lines[lines.index("Existing cores:") + 1] == "(none)"
    assert m.cores == {}


def test_voice_first_and_steer_shows_only_passed_hints():
    steer = Steer(summary="S" * 2000, pulled=False, promote=["fish tales"], noise=[])
    p, _ = draft_prompt(voice_block="I AM THE VOICE\n", steer=steer, topic="fish", entries=[entry(1, "t")],
                        candidates=[])
    assert p.startswith("I AM THE VOICE\n")
    assert "The brief for this period (written by the main model, who was there)" in p
    assert "S" * 900 in p and "S" * 901 not in p
    assert "fish tales" in p and "THIS topic as worth keeping" in p
    assert "noise (" not in p
    assert p.index("Steer:") < p.index("Topic: fish")
    pulled = Steer(summary="b", pulled=True, promote=[], noise=["chores"])
    p, _ = draft_prompt(voice_block="", steer=pulled, topic="fish", entries=[entry(1, "t")], candidates=[])
    assert "(pulled from the fragments by a small model)" in p
    assert "THIS topic as noise (chores)" in p and "worth keeping (" not in p
    assert p.startswith("You are")


def test_redraft_prompt_structure():
    op = {"kind": "attach", "content": "Likes trout.", "target_core_id": "core-old", "topic": "fish", "index": 1}
    earlier = [{"attempt": 1, "kind": "new_core", "content": "Likes fish a lot", "critique": "attach it"}]
    p, m = redraft_prompt(voice_block="VOICE", critique="Say trout, not fish.", op=op, earlier=earlier,
                          entries=[entry(1, "ate trout")], candidates=CORES[:1])
    lines = p.split("\n")
    assert lines[0] == "VOICE"
    assert "DENIED" in p and "THE CRITIQUE IS TRUE" in p and '{"operations": []}' in p
    assert lines[lines.index("THE CRITIQUE:") + 1] == "Say trout, not fish."
    assert lines[lines.index("The critique, once more:") + 1] == "Say trout, not fish."
    assert "  target: [c2]" in lines and m.cores["c2"] == "core-old"
    assert "attempt 1 (new_core): Likes fish a lot — critique: attach it" in lines
    assert "[f1] ate trout (2026-01-01)" in lines
    assert lines[-1] == "JSON:"
    order = [p.index(s) for s in ('{"operations": [{', "THE CRITIQUE:", "What you proposed:", "Earlier versions:",
                                  "Fragments:", "Existing cores:", "The critique, once more:", "JSON:")]
    assert order == sorted(order)


def test_redraft_without_fragments_or_target():
    op = {"kind": "new_core", "content": "x", "target_core_id": None, "topic": None, "index": 0}
    p, m = redraft_prompt(voice_block="", critique="c", op=op, earlier=[], entries=[], candidates=[])
    lines = p.split("\n")
    assert "  target: (none)" in lines
    assert "approved operation already took them" in lines[lines.index("Fragments:") + 1]
    assert m.fragments == {} and m.cores == {}


BRIEF = "Sam moved to Lyon; the garden talk was noise; the bread recipe matters."


@pytest.mark.parametrize("build,rules,shape", [(draft_prompt, DRAFT_RULES, ANSWER_FORMAT),
                                               (extract_prompt, EXTRACT_RULES, EXTRACT_FORMAT)])
def test_two_piles_of_one_night_share_the_whole_head_and_differ_only_after_it(build, rules, shape):
    """What a night shares (voice, rules, the answer's shape, the brief) is one byte-identical prefix of every
    pile's prompt: a server keeping its cache evaluates it once. The pile's own text (its hints, topic,
    fragments, cores) is after it."""
    one, _ = build(voice_block="THE VOICE CARD", topic="bread",
                   steer=Steer(summary=BRIEF, promote=["bread recipe"]),
                   entries=[entry(1, "Baked rye with caraway on Sunday.")], candidates=CORES[:1])
    two, _ = build(voice_block="THE VOICE CARD", topic="garden",
                   steer=Steer(summary=BRIEF, noise=["garden talk"]),
                   entries=[entry(2, "Moved the bench under the apple tree."), entry(3, "Weeded the beds.")],
                   candidates=CORES[1:])
    shared = os.path.commonprefix([one, two])
    head_end = max(p.index(BRIEF) + len(BRIEF) for p in (one, two))
    for part in ("THE VOICE CARD", rules, shape, BRIEF):
        assert part in shared
    assert len(shared) >= head_end and len(shared) >= len(rules) + len(shape) + len(BRIEF)
    for prompt, pile in ((one, ("worth keeping (bread recipe)", "Topic: bread", "[f1] Baked rye")),
                         (two, ("noise (garden talk)", "Topic: garden", "[f2] Weeded the beds."))):
        assert all(prompt.index(words) >= len(shared) for words in pile), pile
        assert prompt.endswith("\nJSON:")


def test_a_redraft_shares_the_same_head_as_every_other_redraft():
    ops = [{"kind": "new_core", "content": c, "target_core_id": None, "topic": "t", "index": 0}
           for c in ("Likes trout.", "Lives in Lyon.")]
    one, two = (redraft_prompt(voice_block="VOICE", critique=f"fix {i}", op=op, earlier=[], entries=[entry(i, "x")],
                               candidates=[])[0] for i, op in enumerate(ops))
    shared = os.path.commonprefix([one, two])
    assert REDRAFT_RULES in shared and ANSWER_FORMAT in shared
    assert len(shared) >= one.index(ANSWER_FORMAT) + len(ANSWER_FORMAT)
    assert "fix 0" not in shared and "fix 1" not in shared
