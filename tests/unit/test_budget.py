"""A night's budget (cycle/budget.py), as a table: the calls' costs in order, the limits, and which limit stops
the night before which call."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from hippocampus.config import build
from hippocampus.cycle import budget

DEFAULTS = build({}, environ={}).sleep.budget


def limits(calls=0, answer_tokens=0, wall_seconds=0.0, cut_in_a_row=0):
    return SimpleNamespace(calls=calls, answer_tokens=answer_tokens, wall_seconds=wall_seconds,
                           cut_in_a_row=cut_in_a_row)


# (the limits, each call as (tokens, cut, seconds since the start when the next call is asked), the limit that
# stops the night or None, how many calls were made before it)
CASES = [
    ("nothing set: nothing stops", limits(), [(2000, True, 10)] * 50, None, 50),
    ("the breaker: three cut answers in a row", limits(cut_in_a_row=3), [(2000, True, 1)] * 10, "cut_in_a_row", 3),
    ("an answer that ends resets the breaker", limits(cut_in_a_row=3),
     [(2000, True, 1), (2000, True, 1), (300, False, 1), (2000, True, 1), (2000, True, 1), (300, False, 1)],
     None, 6),
    ("the calls", limits(calls=4), [(100, False, 1)] * 10, "calls", 4),
    ("the answer tokens", limits(answer_tokens=1000), [(400, False, 1)] * 10, "answer_tokens", 3),
    ("the wall", limits(wall_seconds=60), [(10, False, 25)] * 10, "wall_seconds", 3),
    ("the breaker is named before the calls", limits(calls=3, cut_in_a_row=3), [(2000, True, 1)] * 5,
     "cut_in_a_row", 3),
    ("the defaults let a seven-pile night with two redrafts of five through", DEFAULTS,
     [(1500, False, 60)] * 17, None, 17),
    ("the defaults stop a model running to the cap after three answers", DEFAULTS, [(2000, True, 60)] * 20,
     "cut_in_a_row", 3),
]


@pytest.mark.parametrize("why,lim,costs,stops,made", CASES, ids=[c[0] for c in CASES])
def test_the_meter_stops_the_night_at_the_first_limit_reached(why, lim, costs, stops, made):
    meter = budget.Meter(lim, started=1000.0)
    spent, calls = None, 0
    for tokens, cut, at in costs:
        spent = meter.spent(1000.0 + sum(c[2] for c in costs[:calls]))
        if spent:
            break
        meter.count(tokens, cut)
        calls += 1
        spent = None
    else:
        spent = meter.spent(1000.0 + sum(c[2] for c in costs))
    assert (spent.limit if spent else None) == stops
    assert calls == made
    if spent:
        assert spent.setting == f"sleep.budget.{stops}" and spent.setting in spent.reason()
        with pytest.raises(budget.BudgetSpent) as raised:
            meter.check(1000.0 + sum(c[2] for c in costs[:calls]))
        assert raised.value.spent == spent and spent.setting in str(raised.value)


def test_the_breaker_s_words_say_the_answers_were_cut_and_name_both_settings():
    words = budget.Spent("cut_in_a_row", 3, 3).reason()
    assert words.startswith("3 answers in a row ran into the answer cap")
    assert "sleep.budget.cut_in_a_row" in words and "model.max_tokens" in words
    assert budget.Spent("calls", 60, 60).reason() == \
        "the night made 60 model calls, all that sleep.budget.calls (60) allows"


@pytest.mark.parametrize("answer,tokens", [
    (SimpleNamespace(text="x" * 4000, usage={"completion_tokens": 2000}), 2000),    # the server's count
    (SimpleNamespace(text="x" * 4001, usage=None), 1001),                           # else about 4 characters a token
    (SimpleNamespace(text="", usage={"completion_tokens": None}), 0),
    (SimpleNamespace(text="abcdefgh", usage={"prompt_tokens": 900}), 2),
])
def test_answer_tokens_are_the_server_s_count_else_an_estimate(answer, tokens):
    assert budget.answer_tokens(answer) == tokens


def test_only_an_answer_the_server_cut_at_the_cap_trips_the_breaker():
    assert budget.was_cut(SimpleNamespace(finish_reason="length"))
    assert not budget.was_cut(SimpleNamespace(finish_reason="stop")) and not budget.was_cut(None)


def test_metered_sets_the_meter_for_the_block_and_puts_back_the_one_before():
    holder = SimpleNamespace(meter=None)
    outer, inner = budget.Meter(limits(), 0.0), budget.Meter(limits(), 0.0)
    with budget.metered(holder, outer):
        with pytest.raises(RuntimeError):
            with budget.metered(holder, inner):
                assert holder.meter is inner
                raise RuntimeError("a failed call")
        assert holder.meter is outer
    assert holder.meter is None


def test_the_budget_is_a_setting_checked_and_named_like_the_others():
    assert (DEFAULTS.calls, DEFAULTS.answer_tokens, DEFAULTS.wall_seconds, DEFAULTS.cut_in_a_row) == \
        (60, 60000, 3600.0, 3)
    cfg = build({"sleep": {"budget": {"calls": -5, "answer_tokens": "lots"}}},
                environ={"SEREN_HIPPOCAMPUS_SLEEP_BUDGET_CUT_IN_A_ROW": "2",
                         "SEREN_HIPPOCAMPUS_SLEEP_BUDGET_WALL_SECONDS": "600"})
    assert cfg.sleep.budget.calls == 60 and cfg.sleep.budget.answer_tokens == 60000
    assert any("'sleep.budget.calls' = -5 must be at least 0" in w for w in cfg.warnings), cfg.warnings
    assert any("'sleep.budget.answer_tokens'" in w for w in cfg.warnings), cfg.warnings
    assert (cfg.sleep.budget.cut_in_a_row, cfg.sleep.budget.wall_seconds) == (2, 600.0)
    assert cfg.sources.of("sleep.budget.cut_in_a_row") == "environment"


def test_the_budget_flags_lay_over_the_yaml_and_help_names_each_setting():
    from hippocampus.__main__ import build_parser
    from hippocampus.cli.flags import FlagError, apply_flags

    p = build_parser()
    cfg = build({"sleep": {"budget": {"calls": 10}}}, environ={})
    changed = apply_flags(cfg, p.parse_args(["serve", "--budget-calls", "30", "--budget-cut-in-a-row", "0",
                                             "--budget-seconds", "900", "--budget-answer-tokens", "5000"]),
                          say=lambda line: None)
    assert (cfg.sleep.budget.calls, cfg.sleep.budget.cut_in_a_row, cfg.sleep.budget.wall_seconds,
            cfg.sleep.budget.answer_tokens) == (30, 0, 900.0, 5000)
    assert set(changed) == {f"sleep.budget.{k}" for k in ("calls", "cut_in_a_row", "wall_seconds", "answer_tokens")}
    with pytest.raises(FlagError, match="--budget-calls must be at least 0, not -1"):
        apply_flags(build({}, environ={}), p.parse_args(["serve", "--budget-calls", "-1"]), say=lambda line: None)
    help_text = " ".join(p.format_help().split())
    for setting in ("sleep.budget.calls", "sleep.budget.answer_tokens", "sleep.budget.wall_seconds",
                    "sleep.budget.cut_in_a_row"):
        assert setting in help_text, setting


def test_calls_in_flight_count_against_the_call_budget_and_a_call_never_sent_gives_its_place_back():
    meter = budget.Meter(limits(calls=2), 0.0)
    meter.check(0.0)
    meter.check(0.0)                    # two calls in flight at once (model.parallel): both booked
    with pytest.raises(budget.BudgetSpent):
        meter.check(0.0)                # a third is not allowed before either is answered
    meter.count(10)
    meter.unbook()                      # the other never went out (the model did not come up)
    assert (meter.calls, meter.booked) == (1, 0)
    meter.check(0.0)
    assert meter.used("calls", 0.0) == 2


def test_a_call_booked_when_its_pile_started_is_not_checked_again_on_its_thread():
    meter = budget.Meter(limits(calls=1), 0.0)
    meter.check(0.0)                    # booked by the drafting loop, in pile order
    meter.hold()
    meter.check(0.0)                    # the pile's own call: the booking, not a second one
    meter.drop()
    assert meter.booked == 1
    with pytest.raises(budget.BudgetSpent):
        meter.check(0.0)


def test_the_shared_gate_hears_the_span_calls_were_in_flight_not_their_sum():
    from hippocampus.cycle.parallel import _SharedGate

    heard = []
    gate = _SharedGate(SimpleNamespace(ensure=lambda: None, release=heard.append, handover=lambda: "kept"))
    gate.ensure()
    gate.ensure()
    gate.release(5.0)                   # another call is still in flight: its time is not added
    gate.release(5.0)
    assert heard[0] == 0.0 and 0.0 <= heard[1] < 5.0 and gate.handover() == "kept"
