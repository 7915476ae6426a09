from hippocampus.drafting.prompt import Markers, Steer, draft_prompt, redraft_prompt

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
    order = [p.index(s) for s in ("Topic: fish", "Fragments:", "Existing cores:", '{"operations"', "JSON:")]
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
    order = [p.index(s) for s in ("THE CRITIQUE:", "What you proposed:", "Earlier versions:", "Fragments:",
                                  "Existing cores:", "The critique, once more:", '{"operations": [{', "JSON:")]
    assert order == sorted(order)


def test_redraft_without_fragments_or_target():
    op = {"kind": "new_core", "content": "x", "target_core_id": None, "topic": None, "index": 0}
    p, m = redraft_prompt(voice_block="", critique="c", op=op, earlier=[], entries=[], candidates=[])
    lines = p.split("\n")
    assert "  target: (none)" in lines
    assert "approved operation already took them" in lines[lines.index("Fragments:") + 1]
    assert m.fragments == {} and m.cores == {}
