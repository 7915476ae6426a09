"""The answer's JSON schema (drafting/schema.py), the cut-off words (drafting/answer.py), telling a refused
response_format from another 400 (model/structured.py), and a replay sending the schema its packet recorded."""
from __future__ import annotations

import jsonschema
import pytest

from hippocampus.drafting import pull, schema
from hippocampus.drafting.answer import parse_answer
from hippocampus.drafting.prompt import Markers, draft_prompt, redraft_prompt
from hippocampus.model.structured import names_the_format, said

ENTRIES = [{"id": f"s{i}", "content": f"fragment {i}"} for i in range(1, 4)]
CORES = [{"id": "core-a", "content": "Likes fish."}, {"id": "core-b", "content": "Lives by the sea."}]


def test_the_draft_schema_offers_only_what_the_prompt_showed():
    _, markers = draft_prompt(voice_block="", steer=None, topic="fish", entries=ENTRIES, candidates=CORES)
    sch = schema.answer_schema(markers, 2000)
    item = sch["properties"]["operations"]["items"]
    props = item["properties"]
    assert props["kind"] == {"enum": ["new_core", "attach", "supersede"]}
    assert props["fragments"]["items"] == {"enum": ["f1", "f2", "f3"]} and props["fragments"]["minItems"] == 1
    assert props["target"] == {"enum": ["c1", "c2", None]}
    assert item["required"] == list(props) and item["additionalProperties"] is False
    assert sch["additionalProperties"] is False and sch["required"] == ["operations"]
    assert "restated_content" in props
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"operations": [{**schema.worst_case(sch)["operations"][0], "fragments": ["f9"]}]}, sch)


def test_the_redraft_schema_offers_no_restated_content():
    op = {"kind": "attach", "target_core_id": "core-a", "content": "x", "source_short_ids": ["s1"]}
    _, markers = redraft_prompt(voice_block="", critique="wrong", op=op, earlier=[], entries=[], candidates=CORES)
    props = schema.answer_schema(markers, 512, redraft=True)["properties"]["operations"]["items"]["properties"]
    assert "restated_content" not in props
    assert props["fragments"]["maxItems"] == 0              # no fragment left to cite


@pytest.mark.parametrize("max_tokens", [256, 512, 1024, 2000])
@pytest.mark.parametrize("n_frag,n_cores", [(1, 0), (4, 3), (12, 8), (40, 50)])
def test_the_longest_answer_the_schema_allows_fits_max_tokens(max_tokens, n_frag, n_cores):
    for redraft in (False, True):
        markers = Markers(fragments={f"f{i}": i for i in range(1, n_frag + 1)},
                          cores={f"c{i}": i for i in range(1, n_cores + 1)})
        sch = schema.answer_schema(markers, max_tokens, redraft=redraft)
        worst = schema.worst_case(sch)
        jsonschema.validate(worst, sch)
        assert schema.estimate_tokens(worst) <= max_tokens * schema.SHARE
        assert worst["operations"] and worst["operations"][0]["content"]


def test_the_brief_schema_fits_too():
    for max_tokens in (256, 512, 2000):
        sch = pull.response_format(max_tokens)["json_schema"]["schema"]
        assert schema.estimate_tokens(schema.worst_case(sch)) <= max_tokens * schema.SHARE


M = Markers(fragments={"f1": "s1", "f2": "s2"}, cores={"c1": "core-1"})


def parse(text, constrained=False):
    return parse_answer(text, finish_reason="length", markers=M, max_tokens=256, constrained=constrained)


def test_a_cut_off_answer_with_no_operation_in_it_is_not_called_a_low_max_tokens():
    p = parse("éma bold damit Never goldenuchar golden maximum uses isol companies " * 20)   # the case
    assert p.failure.startswith("the model wrote 1359 characters up to model.max_tokens (256) without starting "
                                "the JSON asked for"), p.failure
    assert "too low" not in p.failure and "model.structured" in p.failure
    p = parse('{"operations": [{"kind": "new_core", "content": "' + "runs on " * 200)
    assert "one field ran on for 1599 characters" in p.failure and "too low" not in p.failure


def test_a_constrained_answer_cut_off_is_named_and_keeps_only_finished_operations():
    whole = '{"kind": "new_core", "content": "one", "fragments": ["f1"], "target": null}'
    p = parse('{"operations": [' + whole + ', {"kind": "attach", "content": "two and', constrained=True)
    assert p.cut_off and p.failure is None and [o["content"] for o in p.operations] == ["one"]
    p = parse('{"operations" :\n\n\n      [{"kind":   \n\n   "new_core", "content": "a' + " " * 300, constrained=True)
    assert p.failure.startswith("the answer was cut off at model.max_tokens (256) before the first operation "
                                "was complete: held to the answer's schema"), p.failure
    assert p.operations == []


def test_a_plain_answer_cut_off_mid_operation_of_a_sane_size_says_raise_max_tokens():
    p = parse('{"operations": [{"kind": "new_core", "content": "Likes fish and')
    assert p.failure.endswith("model.max_tokens (256) is too low for this model's answers; raise model.max_tokens")


@pytest.mark.parametrize("status,body,refused", [
    (400, '{"error": {"message": "Invalid parameter: \'response_format\' of type \'json_schema\' is not supported '
          'with this model.", "type": "invalid_request_error", "param": "response_format"}}', True),      # OpenAI
    (400, '{"error": {"code": 400, "message": "response_format type must be one of \\"text\\" or \\"json_object\\", '
          'but got: json_schema", "type": "invalid_request_error"}}', True),         # an older llama-server
    (400, '{"error": {"code": 400, "message": "\\"json_schema\\": JSON schema conversion failed", '
          '"type": "invalid_request_error"}}', True),                              # llama-server, a schema it cannot take
    (400, '{"error": {"code": 400, "message": "request (3025 tokens) exceeds the available context size (512 '
          'tokens), try increasing it", "type": "exceed_context_size_error"}}', False),
    (400, '{"error": {"message": "\'messages\' is required"}}', False),
    (500, '{"error": {"message": "grammar sampler crashed"}}', False),              # a 500 is the server's fault
])
def test_a_refused_response_format_is_told_apart_from_other_errors(status, body, refused):
    assert names_the_format(status, body) is refused


def test_said_takes_the_servers_message():
    assert said('{"error": {"message": "no json_schema here"}}') == "no json_schema here"
    assert said('{"error": "plain"}') == "plain"
    assert said("not json") == "not json"
