"""Answers sized to what they hold (drafting/schema.py answer_cap, drafting/extractive.py extract_cap), and the
server's own token counts of a call and of a night (model/timings.py)."""
from __future__ import annotations

import jsonschema
import pytest

from hippocampus.drafting import extractive, schema
from hippocampus.drafting.answer import parse_answer
from hippocampus.drafting.prompt import Markers
from hippocampus.model import timings


def pile(n_frag: int, n_cores: int) -> Markers:
    return Markers(fragments={f"f{i}": f"s{i}" for i in range(1, n_frag + 1)},
                   cores={f"c{i}": f"core-{i}" for i in range(1, n_cores + 1)})


# (fragments, cores, model.max_tokens) -> (free draft's cap, extractive cap): a small pile's answer is capped far
# below model.max_tokens; a big pile, or a low model.max_tokens, is capped at model.max_tokens, never above it
TABLE = [((1, 0, 2000), (374, 128)), ((2, 1, 2000), (748, 128)), ((3, 2, 2000), (1132, 188)),
         ((5, 3, 2000), (1932, 359)), ((8, 4, 2000), (2000, 695)), ((12, 8, 2000), (2000, 866)),
         ((3, 2, 1024), (1024, 188)), ((12, 8, 1024), (1024, 866)), ((3, 2, 256), (256, 188)),
         ((12, 8, 256), (256, 256)), ((1, 0, 100), (100, 100))]


@pytest.mark.parametrize("size,caps", TABLE)
def test_the_answer_cap_is_sized_to_the_pile_within_model_max_tokens(size, caps):
    n_frag, n_cores, ceiling = size
    m = pile(n_frag, n_cores)
    assert (schema.answer_cap(m, ceiling), extractive.extract_cap(m, ceiling)) == caps


@pytest.mark.parametrize("size,_", [row for row in TABLE if row[0][2] >= 256])   # below, the least lengths win
def test_the_schema_sent_with_a_cap_is_whole_within_it(size, _):
    """The schema sized by the pile's cap allows no answer longer than SHARE of that cap, and a cap below the
    ceiling leaves the schema as full as the ceiling's own: sizing the cap cuts nothing a pile can say."""
    n_frag, n_cores, ceiling = size
    m = pile(n_frag, n_cores)
    for cap, of in ((schema.answer_cap(m, ceiling), schema.answer_schema),
                    (extractive.extract_cap(m, ceiling), extractive.extract_schema)):
        sized, whole = of(m, cap), of(m, ceiling)
        worst = schema.worst_case(sized)
        jsonschema.validate(worst, sized)
        assert schema.estimate_tokens(worst) <= cap * schema.SHARE
        if cap < ceiling:
            assert sized == whole


def test_a_draft_offers_one_operation_per_fragment_and_a_redraft_one_more():
    m = pile(3, 2)
    assert schema.answer_schema(m, 100_000)["properties"]["operations"]["maxItems"] == 3
    assert schema.answer_schema(m, 100_000, redraft=True)["properties"]["operations"]["maxItems"] == 4


def test_a_cut_off_names_the_piles_cap_when_it_is_below_model_max_tokens():
    runaway = '{"operations": [{"kind": "new_core", "content": "' + "and then " * 300
    p = parse_answer(runaway, finish_reason="length", markers=pile(2, 0), max_tokens=748, ceiling=2000)
    assert p.failure.startswith("the answer was cut off at the pile's answer cap (748 tokens, sized to its pile; "
                                "model.max_tokens 2000 is the ceiling) before the first operation was complete")
    same = parse_answer(runaway, finish_reason="length", markers=pile(2, 0), max_tokens=2000, ceiling=2000)
    assert same.failure.startswith("the answer was cut off at model.max_tokens (2000) before")


@pytest.mark.parametrize("answer,counted", [
    ({"timings": {"prompt_n": 40, "cache_n": 1900, "predicted_n": 75, "prompt_ms": 80.0}},
     {"prompt": 1940, "evaluated": 40, "cached": 1900, "answer": 75, "ms": 80.0}),
    ({"timings": {"prompt_n": 1940, "predicted_n": 0}},
     {"prompt": 1940, "evaluated": 1940, "cached": 0, "answer": 0, "ms": 0.0}),
    ({"usage": {"prompt_tokens": 500, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 448}}},
     {"prompt": 500, "evaluated": 52, "cached": 448, "answer": 20}),
    ({"usage": {"prompt_tokens": 500, "completion_tokens": 20}}, {"prompt": 500, "evaluated": 500, "cached": 0,
                                                                 "answer": 20}),
    ({"usage": {"total_tokens": 3}}, None), ({"timings": {"prompt_n": -1}}, None), ({}, None), ([], None),
])
def test_one_calls_tokens_are_read_from_the_servers_own_counts(answer, counted):
    assert timings.read(answer) == counted


def test_a_nights_tokens_are_the_sum_of_the_calls_the_server_counted():
    night = {}
    for one in ({"prompt": 1940, "evaluated": 1940, "cached": 0, "answer": 75}, None,
                {"prompt": 1990, "evaluated": 90, "cached": 1900, "answer": 60}):
        night = timings.add(night, one)
    assert night == {"prompt": 3930, "evaluated": 2030, "cached": 1900, "answer": 135, "timed": 2}
    assert timings.words(night) == ("3,930 prompt tokens (2,030 evaluated, 1,900 from the server's cache), "
                                    "135 answer tokens")
    assert timings.words(timings.add({}, None)) is None and timings.words(None) is None
