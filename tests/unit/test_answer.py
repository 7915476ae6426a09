import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hippocampus.drafting.answer import parse_answer, strip_scaffolding
from hippocampus.drafting.prompt import Markers

M = Markers(fragments={"f1": "s1", "f2": "s2", "f3": "s3"}, cores={"c1": "core-1", "c2": "core-2"},
            entries={})


def parse(text, finish="stop", markers=M, **kw):
    return parse_answer(text, finish_reason=finish, markers=markers, max_tokens=777, **kw)


def op(kind="new_core", content="Likes fish.", fragments=("f1",), **kw):
    return dict(kind=kind, content=content, fragments=list(fragments), **kw)


def answer(*ops):
    return json.dumps({"operations": list(ops)})


def test_plain_answer_maps_markers():
    p = parse(answer(op(fragments=["f1", "f3", "f1"], topic="fish", rationale="r"),
                     op("attach", "ate fish again", ["f2"], target="c2", restated_content="Loves fish.")))
    assert p.failure is None and not p.cut_off and p.dropped == []
    assert p.operations == [
        {"kind": "new_core", "content": "Likes fish.", "topic": "fish", "source_short_ids": ["s1", "s3"],
         "evidence_count": 2, "rationale": "r"},
        {"kind": "attach", "content": "ate fish again", "target_core_id": "core-2", "source_short_ids": ["s2"],
         "evidence_count": 1, "restated_content": "Loves fish."}]


def test_prose_fences_think_and_trailing_commas():
    body = '{"operations": [{"kind": "NEW_CORE", "content": "x", "fragments": ["f1",],},],}'
    for text in (f"Sure, here you go:\n{body}\nHope that helps!",
                 f"```json\n{body}\n```",
                 f"<think>hmm {{\"operations\": []}}</think>\n```\n{body}\n```\nbye",
                 f"reasoning... </think>{body}"):
        p = parse(text)
        assert p.failure is None, text
        assert [o["content"] for o in p.operations] == ["x"]


def test_unknown_kinds_and_verbatim():
    p = parse(answer(op("merge"), op("verbatim", "word for word"), "not a dict", op(None)))
    assert [o["kind"] for o in p.operations] == ["new_core"]
    assert len(p.dropped) == 3


def test_invented_markers_drop_the_op():
    p = parse(answer(op(fragments=["f1", "f9"]), op("attach", "x", ["f1"], target="c7"),
                     op("supersede", "y", ["f2"], target="deadbeef" * 4), op(fragments=[]),
                     op("attach", "z", ["f2"])))
    assert p.operations == [] and len(p.dropped) == 5
    assert any("f9" in d for d in p.dropped) and any("c7" in d for d in p.dropped)


def test_integer_and_loose_markers():
    p = parse(answer(op(fragments=[1, "2", "[F3]"]), op("attach", "x", ["f1"], target="[C1]"),
                     op("attach", "y", ["f1"], target="core-2")))
    assert p.operations[0]["source_short_ids"] == ["s1", "s2", "s3"]
    assert [o.get("target_core_id") for o in p.operations] == [None, "core-1", "core-2"]


def test_missing_fields_and_content_rules():
    p = parse(answer({"kind": "new_core", "fragments": ["f1"]},  # no content
                     {"kind": "supersede", "content": "  ", "fragments": ["f1"], "target": "c1"},
                     {"kind": "attach", "fragments": ["f2"], "target": "c1"},  # neither text
                     {"kind": "attach", "fragments": ["f2"], "target": "c1", "restated_content": "New wording"},
                     {"kind": "new_core", "content": "c", "fragments": ["f3"], "restated_content": "c2"},
                     {"kind": "attach", "content": "same", "restated_content": " same ", "fragments": ["f1"],
                      "target": "c2"}))
    assert len(p.dropped) == 3
    assert p.operations[0] == {"kind": "attach", "content": "", "target_core_id": "core-1",
                               "source_short_ids": ["s2"], "evidence_count": 1, "restated_content": "New wording"}
    assert "restated_content" not in p.operations[1] and "restated_content" not in p.operations[2]


def test_empty_or_missing_operations_taken_at_word():
    for text in ('{"operations": []}', '{"withdraw": true}', '{"operations": null}'):
        p = parse(text)
        assert p.operations == [] and p.failure is None and not p.cut_off


def test_operations_wrapped_in_another_object_are_read():
    """Found: {"draft": {"operations": [...]}} read as no operations and no failure, so the pile's memories were
    silently not drafted and the brief was used up."""
    for text in (json.dumps({"draft": json.loads(answer(op(content="Likes fish.")))}),
                 json.dumps({"result": {"summary": "x", "operations": [op(content="Likes fish.")]}})):
        p = parse(text)
        assert p.failure is None and [o["content"] for o in p.operations] == ["Likes fish."], (text, p)


def test_target_op_remapped_and_checked():
    p = parse(answer(op("merge"), op(content="A"), op("attach", "x", ["f2"], target_op=2),
                     op("supersede", "y", ["f2"], target_op="1"), op("attach", "z", ["f3"], target_op=3),
                     op("attach", "w", ["f3"], target_op=9)))
    assert [(o["kind"], o.get("target_op")) for o in p.operations] == [("new_core", None), ("supersede", 0)]
    assert len(p.dropped) == 4


def test_cap_at_fragments_plus_one():
    p = parse(answer(*[op(content=str(i)) for i in range(10)]))
    assert [o["content"] for o in p.operations] == ["0", "1", "2", "3"]


def test_scaffolding_cut():
    assert strip_scaffolding("Likes fish.\nFragments:\n[f1] x") == ("Likes fish.", True)
    assert strip_scaffolding("A Topic: in the middle") == ("A Topic: in the middle", False)
    p = parse(answer(op(content="Likes fish.\n  JSON:\n{}"), op(content="Existing cores:\n[c1] x")))
    assert [o["content"] for o in p.operations] == ["Likes fish."]


def test_markers_written_into_the_text_are_not_kept_in_the_memory():
    """Found: a model that cites inline ("Likes fish [f1]." or "[f2] Sam moved to Lyon") had the prompt's markers
    land in long-term memory as part of the text."""
    p = parse(answer(op(content="Likes fish [f1].", fragments=["f1"]),
                     op("attach", "[F2] ate fish again [f2][f3]", ["f2"], target="c1",
                        restated_content="Loves fish [c1] a lot")))
    assert [(o["content"], o.get("restated_content")) for o in p.operations] == [
        ("Likes fish.", None), ("ate fish again", "Loves fish a lot")]
    assert parse(answer(op(content="[f1]"))).operations == []          # nothing left to keep


def test_markers_cited_together_or_in_brackets_are_not_kept_in_the_memory_either():
    """Found: "Likes fish [f1, f2]." and "Likes fish (f1)." landed in long-term memory with the markers; a
    Formula 1 race (F1) written in capitals stays."""
    p = parse(answer(op(content="Likes fish [f1, f2].", fragments=["f1", "f2"]),
                     op(content="Ate fish again (f2) and (f2; f3)", fragments=["f2"]),
                     op(content="Watched the race (F1) with Sam", fragments=["f3"])))
    assert [o["content"] for o in p.operations] == ["Likes fish.", "Ate fish again and",
                                                    "Watched the race (F1) with Sam"]


def test_what_a_cut_marker_leaves_behind_goes_with_it():
    """Found: "[f1]: Likes fish" became ": Likes fish" in memory, "Likes fish ([f1])" "Likes fish ()", and
    "Likes fish [f1],[f2]" "Likes fish,"."""
    contents = ["[f1]: Likes fish", "[f1] - Likes fish", "Likes fish ([f1])", "Likes fish [f1],[f2]",
                "f1: Likes fish", "Likes fish: a lot [f1]", "[f2] -5 °C on the balcony",
                "F1: Verstappen won"]
    p = parse(answer(*[op(content=c, fragments=[f"f{n % 3 + 1}"]) for n, c in enumerate(contents)]),
              markers=Markers(fragments={f"f{n}": f"s{n}" for n in range(1, 8)}, cores={}, entries={}))
    assert [o["content"] for o in p.operations] == ["Likes fish"] * 5 + ["Likes fish: a lot", "-5 °C on the balcony",
                                                                         "F1: Verstappen won"]


def test_cut_off_keeps_finished_ops():
    full = answer(op(content="one"), op(content="two", fragments=["f2"]))
    text = full[: full.index('"two"') + 2]
    p = parse(text, finish="length")
    assert p.cut_off and p.failure is None
    assert [o["content"] for o in p.operations] == ["one"]
    p = parse('```json\n{"operations": [{"kind": "new_core", "content": "a", "fragments": ["f1"],},\n {"ki')
    assert p.cut_off and [o["content"] for o in p.operations] == ["a"]


def test_cut_off_before_first_op_names_max_tokens():
    for text in ('{"operations": [{"kind": "new_core", "cont', '{"operations"', "", "<think>I wonder"):
        p = parse(text, finish="length")
        assert p.cut_off and p.operations == []
        assert "model.max_tokens (777)" in p.failure and "raise model.max_tokens" in p.failure


def test_a_malformed_operation_in_a_finished_answer_is_dropped_not_a_cut_off():
    """Found: one operation missing a comma, in an answer that ended on its own (finish_reason stop), made the
    whole answer 'cut off at model.max_tokens ... raise model.max_tokens', and the operations after it were lost."""
    bad = '{"kind": "new_core", "content": "Likes tea" "fragments": ["f1"]}'
    good = json.dumps(op(content="Likes fish.", fragments=["f2"]))
    p = parse('{"operations": [%s, %s]}' % (bad, good))
    assert not p.cut_off and p.failure is None, p
    assert [o["content"] for o in p.operations] == ["Likes fish."] and p.dropped == ["op 0: not an object"]
    p = parse('{"operations": [%s]}' % bad)
    assert not p.cut_off and "max_tokens" not in (p.failure or "") and p.operations == [] and p.dropped
    p = parse('{"operations": [%s, %s' % (good, bad[:20]), finish="length")      # a real cut-off is still one
    assert p.cut_off and [o["content"] for o in p.operations] == ["Likes fish."]


def test_not_json_failure():
    p = parse("I cannot help with that {really}.")
    assert not p.cut_off and p.operations == []
    assert p.failure == "the model's answer was not the JSON asked for: 'I cannot help with that {really}.'"


def test_redraft_never_restates_and_marks():
    p = parse(answer(op("attach", "ep", ["f1"], target="c1", restated_content="New core text")), redraft_of=4)
    assert p.operations == [{"kind": "attach", "content": "ep", "target_core_id": "core-1",
                             "source_short_ids": ["s1"], "evidence_count": 1, "redraft_of": 4}]
    p = parse(answer(op("attach", "", ["f1"], target="c1", restated_content="Text")), redraft_of=0)
    assert p.operations[0]["content"] == "Text" and "restated_content" not in p.operations[0]
    p = parse('{"operations": []}', redraft_of=2)
    assert p.operations == [] and p.failure is None  # a withdrawal
    gone = Markers(fragments={}, cores={"c1": "core-1"}, entries={})
    p = parse(answer(op(content="x", fragments=["f1"])), markers=gone, redraft_of=1)
    assert p.operations == [{"kind": "new_core", "content": "x", "source_short_ids": [], "evidence_count": 0,
                             "redraft_of": 1}]


# -- property-based fuzz ---------------------------------------------------------

_scalars = st.one_of(
    st.sampled_from([None, True, False, 1.5, -1, 0, 1, 2, 3, 9, "f1", "f2", "f3", "f4", "c1", "c2", "c9", "1", "0",
                     "new_core", "attach", "supersede", "verbatim", "VERBATIM", "merge", "", " ", "Fragments:\nx",
                     "core-1", "null", "Likes fish."]),
    st.text(max_size=8))
_keys = st.sampled_from(["kind", "content", "topic", "fragments", "target", "target_op", "restated_content",
                         "rationale", "operations", "target_core_id", "source_indexes", "withdraw", "x"])
_json = st.recursive(_scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(_keys, kids, max_size=5)), max_leaves=6)
_CHOICES = {
    "kind": ["new_core", "new_core", "attach", "attach", "supersede", "verbatim", "Attach", "bogus", None, 3],
    "content": ["Likes fish.", "Ate trout.", "x\nJSON:\ny", "", " ", None, 7, ["list"], "Fragments:\nf1"],
    "target": ["c1", "c2", "c1", "c3", None, "core-2", 1, "null", "[C2]", {}],
    "target_op": [0, 1, 2, 3, 5, -1, None, "0", "2", True, 1.0],
    "restated_content": [None, "", "Likes fish.", "New wording", "a\nTopic: b", 5],
    "topic": [None, "", "fish", 3, " fish "],
    "rationale": ["", "r", "x" * 600, None, ["r"]],
}
_FRAGS = ["f1", "f2", "f3", 1, "2", "[f3]", " F1 ", "f4", 0, None, "c1", 1.0, True]
_JUNK = [None, 3, "op", [], {}, {"operations": []}, {"kind": "attach"}, ["f1"], {"kind": "new_core", "fragments": []}]
_PIECES = ["<think>", "</think>", "```json\n", "\n```", "Here:", '{"operations": [', "]}", ",", "}", "{", "[", "]",
           '"', '"operations"', ":", " ", "\n", "null", ",}", ",]", "Sure! ", "\\", '\\"']


def _op(r):
    """An operation-like dict: a valid one, then perhaps broken in a few places."""
    op = {"kind": r.choice(["new_core", "new_core", "attach", "supersede"]),
          "content": r.choice(["Likes fish.", "Ate trout.", "Swims daily."]),
          "fragments": r.sample(_FRAGS[:7], r.randint(1, 3))}
    if op["kind"] != "new_core":
        if r.random() < 0.4:
            op["target"], op["target_op"] = r.choice([None, "null"]), r.randint(0, 3)
        else:
            op["target"] = r.choice(["c1", "c2", "[C1]", "core-2"])
    for _ in range(r.choice([0, 0, 1, 2, 3])):
        key = r.choice(list(_CHOICES) + ["fragments", "delete"])
        if key == "delete":
            op.pop(r.choice(list(op)), None)
        elif key == "fragments":
            op["fragments"] = r.choice([[r.choice(_FRAGS) for _ in range(r.randint(0, 3))],
                                        r.choice(["f1", "1, 2", 2, None, {"f1": 1}])])
        else:
            op[key] = r.choice(_CHOICES[key])
    return op


def _from_seed(seed):
    """An answer built from valid answers: whole, cut anywhere, or spliced with JSON syntax and prose."""
    r = random.Random(seed)
    ops = [_op(r) for _ in range(r.randint(1, 5))] + [r.choice(_JUNK) for _ in range(r.choice([0, 0, 1, 2]))]
    r.shuffle(ops)
    text = json.dumps({"operations": ops}, ensure_ascii=r.random() < 0.5)
    if r.random() < 0.3:
        text = text.replace("}", "},", r.randint(0, 3))  # trailing commas
    mode = r.choice([0, 0, 1, 2, 2, 3])
    if mode == 1:
        return r.choice(["", "Sure!\n", "```json\n", "<think>x</think>"]) + text[:r.randint(0, len(text))]
    if mode == 2:
        return r.choice(["Here it is: ", "```json\n", "<think>{\"a\"}</think>"]) + text + r.choice(["", "\n```", " ok}"])
    if mode == 3:
        bits = [text, text[: len(text) // 2], text[len(text) // 3:]] + _PIECES
        return "".join(r.choice(bits) for _ in range(r.randint(1, 8)))
    return text


_seeded = st.integers(0, 2 ** 32).map(_from_seed)
_spliced = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=10), _seeded), max_size=4).map("".join)
answers = st.one_of(st.text(max_size=120), _json.map(json.dumps), _seeded, _seeded, _seeded, _spliced)


def check_valid(p, markers, redraft_of):
    assert isinstance(p.operations, list) and isinstance(p.dropped, list)
    assert p.failure is None or not p.failure.startswith("could not read")  # the safety net never fired
    frag_ids = set(markers.fragments.values())
    ops = p.operations
    assert len(ops) <= len(markers.fragments) + 1
    for i, o in enumerate(ops):
        assert o["kind"] in ("new_core", "attach", "supersede")
        assert set(o) <= {"kind", "content", "topic", "target_core_id", "target_op", "source_short_ids",
                          "evidence_count", "rationale", "restated_content", "redraft_of"}
        assert all(v is not None for v in o.values())
        if markers.fragments:
            assert o["source_short_ids"] and set(o["source_short_ids"]) <= frag_ids
        assert o["evidence_count"] == len(set(o["source_short_ids"]))
        assert isinstance(o["content"], str)
        if o["kind"] != "attach":
            assert o["content"].strip() and "restated_content" not in o
            assert "target_core_id" not in o or o["kind"] == "supersede"
        if o["kind"] == "new_core":
            assert "target_core_id" not in o and "target_op" not in o
        else:
            assert ("target_core_id" in o) != ("target_op" in o)
        if "target_core_id" in o:
            assert o["target_core_id"] in markers.cores.values()
        if "target_op" in o:
            t = o["target_op"]
            assert isinstance(t, int) and 0 <= t < len(ops) and t != i and ops[t]["kind"] == "new_core"
        if redraft_of is not None:
            assert o["redraft_of"] == redraft_of and "restated_content" not in o
        if "restated_content" in o:
            assert o["restated_content"] != o["content"]
        assert len(o.get("rationale", "")) <= 500


@settings(max_examples=2000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(text=answers, finish=st.sampled_from(["stop", "length", None, "weird"]),
       redraft_of=st.one_of(st.none(), st.integers(0, 3)), no_frags=st.booleans())
def test_fuzz_never_raises_and_ops_are_valid(text, finish, redraft_of, no_frags):
    markers = Markers(fragments={} if no_frags else dict(M.fragments), cores=dict(M.cores), entries={})
    p = parse_answer(text, finish_reason=finish, markers=markers, max_tokens=100, redraft_of=redraft_of)
    check_valid(p, markers, redraft_of)
    if finish == "length":
        assert p.cut_off


def test_a_topic_is_held_to_the_schema_s_length_in_a_free_answer_too():
    """A topic is a few tags (the schema caps it at 60 characters): a model writing on and on in a free-text answer
    gives the core its first 60, not 5,000 characters of tags in Memory."""
    p = parse(answer(op(topic="gardening, roses, " * 300), op(content="Likes trout.", topic="fish")))
    assert p.failure is None and [o["content"] for o in p.operations] == ["Likes fish.", "Likes trout."]
    first, second = (o["topic"] for o in p.operations)
    assert len(first) <= 60 and first.startswith("gardening, roses, gardening") and second == "fish"


def test_a_marker_int_cannot_read_drops_its_operation_not_the_answer():
    """A bare number past int()'s 4,300 digits, or a digit int() refuses ('²'), as a fragment marker or a
    target_op: that operation is dropped, the rest of the answer is kept."""
    long = "9" * 5000
    p = parse(answer(op(fragments=[long]), op(fragments=["²"]), op("attach", "x", ["f1"], target_op=long),
                     op(content="Likes trout.", fragments=["2"])))
    assert p.failure is None and [o["content"] for o in p.operations] == ["Likes trout."]
    assert p.operations[0]["source_short_ids"] == ["s2"] and len(p.dropped) == 3
