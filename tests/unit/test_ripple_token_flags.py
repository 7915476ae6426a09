"""The ripple's bearer never has to be on the command line (issue 41, item 6): --ripple-token-env names the variable
that holds it, --ripple-token-file a file; --ripple-token still works and says it shows in the process list."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hippocampus import config as cm
from hippocampus.__main__ import build_parser
from hippocampus.cli.flags import FlagError, apply_flags

URL = ["--ripple", "endpoint", "--ripple-url", "http://observatory:7401/api/v1/system/ripple"]


def applied(argv: list, yaml: dict = None) -> tuple:
    said: list = []
    cfg = cm.build(yaml or {}, environ={})
    changed = apply_flags(cfg, build_parser().parse_args(argv), say=said.append)
    return cfg, changed, said


def test_the_env_flag_names_the_variable_and_the_token_comes_from_it(monkeypatch):
    monkeypatch.setenv("RIPPLE_SECRET_FOR_TEST", "tok-from-env")
    cfg, changed, said = applied(URL + ["--ripple-token-env", "RIPPLE_SECRET_FOR_TEST"],
                                 {"ripple": {"bearer_token": "yaml-inline"}})     # the flag wins over the yaml
    assert cfg.ripple.resolve_bearer() == "tok-from-env"
    assert cfg.ripple.bearer_token == "" and cfg.ripple.bearer_token_env == "RIPPLE_SECRET_FOR_TEST"
    assert "ripple.bearer_token_env" in changed
    assert not [s for s in said if "warning" in s], said


def test_the_env_flag_refuses_a_variable_that_is_not_set(monkeypatch):
    monkeypatch.delenv("RIPPLE_SECRET_FOR_TEST", raising=False)
    with pytest.raises(FlagError, match="--ripple-token-env names RIPPLE_SECRET_FOR_TEST, which is not set"):
        applied(URL + ["--ripple-token-env", "RIPPLE_SECRET_FOR_TEST"])


def test_the_file_flag_reads_the_first_line_and_names_a_file_others_can_read(tmp_path):
    secret = tmp_path / "ripple.token"
    secret.write_text("tok-from-file\n", encoding="utf-8")
    os.chmod(secret, 0o600)
    cfg, _, said = applied(URL + ["--ripple-token-file", str(secret)])
    assert cfg.ripple.resolve_bearer() == "tok-from-file" and not said
    if os.name != "nt":
        os.chmod(secret, 0o644)
        cfg, _, said = applied(URL + ["--ripple-token-file", str(secret)])
        assert cfg.ripple.resolve_bearer() == "tok-from-file"
        assert said == [f"warning: --ripple-token-file {secret} may be read by other accounts (mode 644): "
                        f"chmod 600 {secret}"]


@pytest.mark.parametrize("make, says", [
    (lambda p: str(p / "missing.token"), "could not be read (No such file or directory)"),
    (lambda p: (p / "empty.token").write_text("\n") and str(p / "empty.token"), "is empty"),
])
def test_the_file_flag_refuses_a_missing_or_empty_file(tmp_path, make, says):
    with pytest.raises(FlagError, match=r"--ripple-token-file .* " + says.replace("(", r"\(").replace(")", r"\)")):
        applied(URL + ["--ripple-token-file", make(tmp_path)])


def test_the_token_flag_still_works_and_warns_that_it_shows_in_the_process_list():
    cfg, _, said = applied(URL + ["--ripple-token", "sekrit"])
    assert cfg.ripple.resolve_bearer() == "sekrit"
    assert len(said) == 1 and said[0].startswith("warning: --ripple-token puts the ripple's bearer on the command "
                                                 "line, where any account on this box can read it in the process "
                                                 "list"), said
    assert "--ripple-token-env NAME" in said[0] and "--ripple-token-file PATH" in said[0]


def test_two_ways_at_once_are_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("RIPPLE_SECRET_FOR_TEST", "x")
    with pytest.raises(FlagError, match="give the ripple's bearer one way"):
        applied(URL + ["--ripple-token", "a", "--ripple-token-env", "RIPPLE_SECRET_FOR_TEST"])


def test_the_real_command_line_warns_on_stderr_and_takes_the_env_flag(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    run = lambda *a, **extra: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "hippocampus", "check-config", "--offline", *URL, *a], capture_output=True,
        text=True, env={**env, **extra}, cwd=str(tmp_path), timeout=60)
    res = run("--ripple-token", "sekrit")
    assert res.returncode != 2 and "warning: --ripple-token puts the ripple's bearer on the command line" \
        in res.stderr, res.stderr
    assert "sekrit" not in res.stdout + res.stderr
    res = run("--ripple-token-env", "RIPPLE_SECRET_FOR_TEST", RIPPLE_SECRET_FOR_TEST="tok-from-env")
    assert res.returncode != 2 and "RIPPLE_SECRET_FOR_TEST" in res.stdout, res.stdout + res.stderr
    assert "tok-from-env" not in res.stdout + res.stderr and "process list" not in res.stderr


TOKEN_EMPTY = "--ripple-token is empty: give the ripple's bearer"
ENV_EMPTY = "--ripple-token-env is empty: give the name of the environment variable that holds the ripple's bearer"


@pytest.mark.parametrize("flag, given, says", [("--ripple-token", "", TOKEN_EMPTY),
                                               ("--ripple-token", "  ", TOKEN_EMPTY),
                                               ("--ripple-token-env", "", ENV_EMPTY),
                                               ("--ripple-token-env", "$", ENV_EMPTY)])
def test_an_empty_token_or_variable_name_is_refused_in_plain_words(flag, given, says):
    """Found: --ripple-token '' set an empty bearer with no word but the process-list warning; --ripple-token-env ''
    said "names , which is not set in this environment: export  (...)"."""
    with pytest.raises(FlagError) as refused:
        applied(URL + [flag, given])
    assert str(refused.value) == says


@pytest.mark.parametrize("block, key", [("ripple", "bearer_token_env"), ("memory", "bearer_token_env"),
                                        ("model.lifecycle", "observatory_token_env")])
def test_a_variables_name_written_with_its_dollar_is_read_alike_by_the_flag_the_yaml_and_the_environment(
        monkeypatch, block, key):
    """Found: --ripple-token-env '$NAME' names NAME (the flag drops the shell's $), but the same text in the yaml
    (bearer_token_env: $NAME) or its variable named a variable '$NAME', which is never set: the token was lost,
    with a warning that "$NAME ... is not set in the environment" while NAME was."""
    import operator

    monkeypatch.setenv("HIPPO_TOKEN_FOR_TEST", "tok")
    environ = {"HIPPO_TOKEN_FOR_TEST": "tok"}
    *outer, inner = block.split(".")
    yaml = {inner: {key: "$HIPPO_TOKEN_FOR_TEST"}}
    for name in reversed(outer):
        yaml = {name: yaml}
    variable = "SEREN_HIPPOCAMPUS_" + f"{block}.{key}".replace(".", "_").upper()
    for cfg in (cm.build(yaml, environ=environ),
                cm.build({}, environ={**environ, variable: "$HIPPO_TOKEN_FOR_TEST"})):
        assert cfg.warnings == []
        assert getattr(operator.attrgetter(block)(cfg), key) == "HIPPO_TOKEN_FOR_TEST"
    if block == "ripple":
        cfg, _, _ = applied(URL + ["--ripple-token-env", "$HIPPO_TOKEN_FOR_TEST"])
        assert cfg.ripple.bearer_token_env == "HIPPO_TOKEN_FOR_TEST" and cfg.ripple.resolve_bearer() == "tok"


@pytest.mark.skipif(os.name == "nt", reason="no /dev/zero")
def test_the_file_flag_refuses_a_device_in_words_instead_of_reading_it_for_ever():
    with pytest.raises(FlagError, match=r"--ripple-token-file /dev/zero is not a regular file \(a character "
                                        r"device\): name a file holding the ripple's bearer on its first line"):
        applied(URL + ["--ripple-token-file", "/dev/zero"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_the_file_flag_refuses_a_fifo_without_waiting_for_a_writer(tmp_path):
    import threading

    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)
    seen: list = []

    def run() -> None:
        try:
            applied(URL + ["--ripple-token-file", str(fifo)])
        except FlagError as exc:
            seen.append(str(exc))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(5)
    if t.is_alive():        # release the open() that waits for a writer, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        t.join(5)
        pytest.fail("--ripple-token-file waited for a writer on a FIFO")
    assert seen == [f"--ripple-token-file {fifo} is not a regular file (a FIFO): name a file holding the ripple's "
                    "bearer on its first line"]


def test_the_file_flag_reads_a_bounded_first_line(tmp_path):
    from hippocampus.cli.flags import TOKEN_FILE_BYTES

    big = tmp_path / "big.token"
    big.write_bytes(b"a" * (TOKEN_FILE_BYTES + 1) + b"\n")
    os.chmod(big, 0o600)
    with pytest.raises(FlagError, match=rf"--ripple-token-file {big} has no line break within its first "
                                        rf"{TOKEN_FILE_BYTES} bytes: a bearer is one short line"):
        applied(URL + ["--ripple-token-file", str(big)])
    big.write_bytes(b"tok\n" + b"b" * (4 * TOKEN_FILE_BYTES))      # a long rest after the first line is not read
    assert applied(URL + ["--ripple-token-file", str(big)])[0].ripple.resolve_bearer() == "tok"


def test_the_file_flag_reads_a_file_saved_with_a_byte_order_mark_as_the_config_is_read(tmp_path):
    """Found: a token file saved as UTF-8 with a BOM (Notepad's way) gave the bearer '\\ufefftok', which no HTTP
    header carries, where the config file itself is read without its BOM (utf-8-sig)."""
    secret = tmp_path / "ripple.token"
    secret.write_bytes(b"\xef\xbb\xbftok-from-file\r\n")
    os.chmod(secret, 0o600)
    assert applied(URL + ["--ripple-token-file", str(secret)])[0].ripple.resolve_bearer() == "tok-from-file"
