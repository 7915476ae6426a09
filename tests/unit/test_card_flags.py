"""The card's number-of-seconds flags take what the yaml takes: a finite number no longer than any clock here
waits (the loader refuses NaN, infinity and past 1e9 s; a NaN in /status or check-config --json is not JSON)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("flag, given", [("--tend-every", "nan"), ("--tend-every", "inf"),
                                         ("--budget-seconds", "NaN"), ("--budget-seconds", "1e400"),
                                         ("--tend-every", "1e300")])
def test_a_seconds_flag_that_is_not_a_finite_number_is_refused(capsys, flag, given):
    from hippocampus.__main__ import build_parser

    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["check-config", flag, given])
    assert stopped.value.code == 2
    assert f"{flag}: expected a number of seconds, not {given!r}" in capsys.readouterr().err


def test_a_finite_seconds_flag_is_taken():
    from hippocampus import config as cm
    from hippocampus.__main__ import build_parser
    from hippocampus.cli.flags import apply_flags

    cfg = cm.build({}, environ={})
    apply_flags(cfg, build_parser().parse_args(["serve", "--tend-every", "90", "--budget-seconds", "0"]),
                say=lambda line: None)
    assert (cfg.sleep.tend_interval_seconds, cfg.sleep.budget.wall_seconds) == (90.0, 0.0)


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("given", ["", "   "])
def test_a_blank_config_path_is_refused_not_read_as_no_flag(capsys, where, given):
    """`--config ''` (an unset shell variable: --config "$CFG") quietly fell back to $SEREN_HIPPOCAMPUS_CONFIG or
    the defaults: a service that started on other settings than the operator named."""
    from hippocampus.__main__ import build_parser

    args = ["--config", given, "check-config"] if where == "before" else ["check-config", "--config", given]
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(args)
    assert stopped.value.code == 2
    assert "--config is blank: give the path of the yaml file" in capsys.readouterr().err


@pytest.mark.parametrize("flag, given, why", [
    ("--budget-seconds", "2e9", "it is past 1e+09, longer than any clock here waits (about 31 years)"),
    ("--tend-every", "inf", "it is not a finite number")])
def test_a_seconds_flag_past_any_clock_says_why_in_the_yamls_words(capsys, flag, given, why):
    """Found: --budget-seconds 2e9 said only 'expected a number of seconds, not '2e9'' (it is one), where the yaml
    says why: 'is past 1e+09, longer than any clock here waits (about 31 years)'."""
    from hippocampus import config as cm
    from hippocampus.__main__ import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["check-config", flag, given])
    assert f"{flag}: expected a number of seconds, not {given!r}: {why}" in capsys.readouterr().err
    yaml = cm.build({"sleep": {"budget": {"wall_seconds": float(given)}}}, environ={}).warnings
    assert yaml == [f"'sleep.budget.wall_seconds' = {float(given)!r} {why[len('it '):]}; using the default 3600.0"]


@pytest.mark.parametrize("flag, key", [("--budget-calls", "calls"), ("--budget-answer-tokens", "answer_tokens"),
                                       ("--budget-seconds", "wall_seconds"), ("--budget-cut-in-a-row", "cut_in_a_row")])
def test_a_negative_budget_is_refused_in_the_yamls_words(flag, key):
    """Found: the budget flags said "must be 0 (no limit) or more" where the yaml says "must be at least 0" of
    the same setting: one setting, one rule, one set of words (the schema's least)."""
    from hippocampus import config as cm
    from hippocampus.__main__ import build_parser
    from hippocampus.cli.flags import FlagError, apply_flags

    with pytest.raises(FlagError) as refused:
        apply_flags(cm.build({}, environ={}), build_parser().parse_args(["serve", flag, "-5"]), say=lambda line: None)
    assert str(refused.value) == f"{flag} must be at least 0, not -5"
    yaml = cm.build({"sleep": {"budget": {key: -5}}}, environ={}).warnings
    assert yaml and "must be at least 0" in yaml[0], yaml
