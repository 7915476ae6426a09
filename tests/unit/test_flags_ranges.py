"""A setting the card's flags set has one rule at both doors: the flag refuses (exit 2) what the yaml and the
environment refuse (a warning, the default kept), and both say the range in the same words."""
from __future__ import annotations

import pytest

from hippocampus import config as cm
from hippocampus.cli.flags import FlagError, apply_flags


def _flag(*argv: str):
    from hippocampus.__main__ import build_parser

    cfg = cm.build({}, environ={})
    apply_flags(cfg, build_parser().parse_args(["serve", *argv]), say=lambda line: None)
    return cfg


@pytest.mark.parametrize("given", ["16", "63", "32769", "2000000"])
def test_model_max_tokens_out_of_range_is_refused_alike_by_the_flag_and_the_yaml(given):
    with pytest.raises(FlagError) as refused:
        _flag("--model-max-tokens", given)
    assert str(refused.value) == f"--model-max-tokens must be 64 to 32768, not {given}"
    cfg = cm.build({"model": {"max_tokens": int(given)}}, environ={})
    assert cfg.model.max_tokens == 2000
    assert cfg.warnings == [f"'model.max_tokens' = {given} must be 64 to 32768; using the default 2000"]
    env = cm.build({}, environ={"SEREN_HIPPOCAMPUS_MODEL_MAX_TOKENS": given})
    assert env.warnings == [f"SEREN_HIPPOCAMPUS_MODEL_MAX_TOKENS={given!r} must be 64 to 32768; keeping 2000"]


@pytest.mark.parametrize("given", [64, 256, 32768])
def test_model_max_tokens_in_range_is_taken_by_both_doors(given):
    assert _flag("--model-max-tokens", str(given)).model.max_tokens == given
    cfg = cm.build({"model": {"max_tokens": given}}, environ={})
    assert cfg.warnings == [] and cfg.model.max_tokens == given


def test_the_help_says_the_range():
    from hippocampus.__main__ import build_parser

    help_text = " ".join(build_parser().format_help().split())
    assert "the answer budget of one drafting call, 64 to 32768 (model.max_tokens)" in help_text


@pytest.mark.parametrize("given", ["0.05", "1", "30", "59.9"])
def test_tend_every_holds_the_installers_rule_and_points_at_the_yaml(given):
    """--tend-every is the family installers' flag: at least 60 s (family conventions); the words say where a
    shorter tend goes (the yaml, which the tests use)."""
    with pytest.raises(FlagError) as refused:
        _flag("--tend-every", given)
    assert str(refused.value) == (f"--tend-every must be at least 60 seconds, not {float(given):g} (a shorter tend, "
                                  "for a test, is sleep.tend_interval_seconds in the yaml)")
    assert _flag("--tend-every", "60").sleep.tend_interval_seconds == 60.0


def test_the_tend_every_help_says_the_least():
    from hippocampus.__main__ import build_parser

    help_text = " ".join(build_parser().format_help().split())
    assert "seconds between tends, at least 60 (sleep.tend_interval_seconds)" in help_text


@pytest.mark.parametrize("given, says", [
    ("0.05", "--timeout must be at least 0.1, not 0.05"), ("0", "--timeout must be at least 0.1, not 0"),
    ("-5", "--timeout must be at least 0.1, not -5"), ("nan", "--timeout: expected a number of seconds, not 'nan'"),
    ("inf", "--timeout: expected a number of seconds, not 'inf'")])
def test_check_ripples_timeout_is_held_to_ripple_timeout_seconds_rule(tmp_path, capsys, given, says):
    """Found: check-ripple --fire --timeout took 0.05 (any number above 0) where the yaml's and the environment's
    ripple.timeout_seconds refuse anything under 0.1; its refusal named neither the range nor the value."""
    from hippocampus.__main__ import main

    conf = tmp_path / "h.yaml"
    conf.write_text(f"sleep:\n  state_path: {tmp_path / 'state.json'}\n", encoding="utf-8")
    try:
        code = main(["check-ripple", "--config", str(conf), "--fire", f"--timeout={given}"])
    except SystemExit as stopped:       # argparse's refusal
        code = stopped.code
    assert code == 2
    assert says in capsys.readouterr().err
    cfg = cm.build({"ripple": {"timeout_seconds": 0.05}}, environ={})
    assert cfg.warnings == ["'ripple.timeout_seconds' = 0.05 must be at least 0.1; using the default 900.0"]


def test_check_ripples_timeout_help_says_the_least():
    from hippocampus.__main__ import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices["check-ripple"]
    assert "(at least 0.1; default ripple.timeout_seconds)" in " ".join(sub.format_help().split())


@pytest.mark.parametrize("flag, setting", [("--model-max-tokens", "model.max_tokens"),
                                           ("--budget-calls", "sleep.budget.calls")])
def test_a_whole_number_flag_reads_a_number_as_the_environment_does(capsys, flag, setting):
    """Found: the whole-number flags read their value with Python's int(), which takes "2_000" (and "1_0"), where
    the environment and the yaml say it "is not a whole number": one setting, two rules."""
    import operator

    from hippocampus.__main__ import build_parser

    variable = "SEREN_HIPPOCAMPUS_" + setting.replace(".", "_").upper()
    env = cm.build({}, environ={variable: "2_000"})
    assert len(env.warnings) == 1 and env.warnings[0].startswith(f"{variable}='2_000' is not a whole number")
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["check-config", flag, "2_000"])
    assert stopped.value.code == 2
    assert f"{flag}: expected a whole number, not '2_000'" in capsys.readouterr().err
    assert operator.attrgetter(setting)(_flag(flag, " 2000 ")) == 2000      # spaces around it: both doors take them


@pytest.mark.parametrize("given, taken", [("Script", "script"), ("ENDPOINT", "endpoint"), ("none", ""),
                                          ("Off", ""), (" script ", "script")])
def test_the_ripple_flag_takes_the_spellings_ripple_type_takes(given, taken):
    """Found: ripple.type takes "none" and any case ("Script"), in the yaml and the environment, but --ripple
    refused them ("invalid choice: 'none' (choose from 'script', 'endpoint', 'off')")."""
    argv = ["--ripple", given] + (["--ripple-url", "http://box:7401/ripple"] if taken == "endpoint" else [])
    assert _flag(*argv).ripple.type == taken
    assert cm.build({"ripple": {"type": given}}, environ={}).ripple.type == taken
    assert cm.build({}, environ={"SEREN_HIPPOCAMPUS_RIPPLE_TYPE": given}).ripple.type == taken


def test_the_ripple_flag_refuses_what_ripple_type_refuses(capsys):
    from hippocampus.__main__ import build_parser

    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["check-config", "--ripple", "webhook"])
    assert stopped.value.code == 2
    assert "--ripple: expected script, endpoint or off, not 'webhook'" in capsys.readouterr().err
    assert cm.build({"ripple": {"type": "webhook"}}, environ={}).warnings == [
        "'ripple.type' = 'webhook' must be one of '', 'script', 'endpoint'; using the default ''"]


@pytest.mark.parametrize("given, says", [
    ('claude -p "{message}', "--ripple-command cannot be read as a command line (no closing quotation): close its "
                             "quotes"),
    ("   ", "--ripple-command is empty: give the command that wakes the main model, like "
           "--ripple-command 'claude -p {message}' (or --ripple-claude DIR to write it)")])
def test_a_ripple_command_flag_that_is_no_command_is_refused_in_the_yamls_words_with_what_to_do(given, says):
    """Found: the flag said "--ripple-command could not be split (No closing quotation)" and "--ripple-command is
    empty", naming nothing to do, where the yaml's words for the same command say to close its quotes."""
    with pytest.raises(FlagError) as refused:
        _flag("--ripple-command", given)
    assert str(refused.value) == says
    cfg = cm.build({"ripple": {"command": 'claude -p "{message}'}}, environ={})
    assert cfg.warnings == ["'ripple.command' = 'claude -p \"{message}' cannot be read as a command line (no closing "
                            "quotation): close its quotes; using the default ['claude', '-p', '{message}']"]


@pytest.mark.parametrize("given", ["2000.0", "2e3", " 2000.00 "])
def test_a_whole_number_written_with_a_zero_fraction_is_taken_at_every_door(given):
    """Found: the yaml takes `model.max_tokens: 2000.0` (and 2e3), a whole number however written, while the same
    text from the environment, a flag or the yaml quoted was 'not a whole number'."""
    from ruamel.yaml import YAML

    bare = YAML(typ="safe", pure=True).load(f"model: {{max_tokens: {given.strip()}}}")
    assert cm.build(bare, environ={}).model.max_tokens == 2000            # the yaml's rule, written bare
    quoted = cm.build({"model": {"max_tokens": given}}, environ={})
    env = cm.build({}, environ={"SEREN_HIPPOCAMPUS_MODEL_MAX_TOKENS": given})
    assert (quoted.warnings, quoted.model.max_tokens) == ([], 2000)
    assert (env.warnings, env.model.max_tokens) == ([], 2000)
    assert _flag("--model-max-tokens", given).model.max_tokens == 2000
    assert _flag("--budget-calls", given).sleep.budget.calls == 2000


@pytest.mark.parametrize("given", ["2000.5", "nan", "inf", "1e400", "2_000.0", "0x10", "."])
def test_a_number_with_a_fraction_or_no_number_is_still_no_whole_number_at_any_door(capsys, given):
    from hippocampus.__main__ import build_parser

    env = cm.build({}, environ={"SEREN_HIPPOCAMPUS_MODEL_MAX_TOKENS": given})
    assert env.warnings == [f"SEREN_HIPPOCAMPUS_MODEL_MAX_TOKENS={given!r} is not a whole number; keeping 2000"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check-config", "--model-max-tokens", given])
    assert f"--model-max-tokens: expected a whole number, not {given!r}" in capsys.readouterr().err


@pytest.mark.parametrize("setting", ["server_args", "start", "stop"])
def test_a_lifecycle_command_line_with_an_open_quote_is_refused_at_load_as_ripple_command_is(setting):
    """Found: ripple.command with an open quote is refused at load (the yaml, the environment, the flag), but
    model.lifecycle.server_args, start and stop were taken silently (check-config --offline: 'no warnings',
    --model-args: exit 0) and failed only when the model was started or stopped."""
    given = '-ngl "99'
    default = repr(getattr(cm.Config().model.lifecycle, setting))
    why = "cannot be read as a command line (no closing quotation): close its quotes"
    cfg = cm.build({"model": {"lifecycle": {setting: given}}}, environ={})
    assert cfg.warnings == [f"'model.lifecycle.{setting}' = {given!r} {why}; using the default {default}"]
    variable = f"SEREN_HIPPOCAMPUS_MODEL_LIFECYCLE_{setting.upper()}"
    env = cm.build({}, environ={variable: given})
    assert env.warnings == [f"{variable}={given!r} {why}; keeping {default}"]
    if setting == "server_args":
        with pytest.raises(FlagError) as refused:
            _flag("--model-server", "/bin/true", "--model-path", "/tmp/m.gguf", "--model-args", given)
        assert str(refused.value) == f"--model-args {why}"
        assert _flag("--model-server", "/bin/true", "--model-path", "/tmp/m.gguf", "--model-args",
                     '-ngl 99 --alias "a b"').model.lifecycle.server_args == '-ngl 99 --alias "a b"'
