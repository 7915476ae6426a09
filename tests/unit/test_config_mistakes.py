"""A person's mistakes in the yaml, each named (issue 20): typos with their did-you-mean, clamps with the
value given and the value used, a yaml error's line and column (and the tab that caused it), a bearer
pointer that yields no token."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hippocampus import config
from hippocampus.config import Config


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "h.yaml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def _load(tmp_path: Path, text: str, environ=None) -> Config:
    return config.load(_write(tmp_path, text), environ={} if environ is None else environ, announce=False)


# ---------------------------------------------------------------- typos

@pytest.mark.parametrize("text, given, meant", [
    ("sever:\n  port: 7500\n", "sever", "server"),
    ("server:\n  prot: 7500\n", "server.prot", "server.port"),
    ("sleep:\n  intervl_seconds: 600\n", "sleep.intervl_seconds", "sleep.interval_seconds"),
    ("server:\n  bearer_tokn: \"abc\"\n", "server.bearer_tokn", "server.bearer_token"),
    ("memory:\n  bearer_tokn_env: \"X\"\n", "memory.bearer_tokn_env", "memory.bearer_token_env"),
])
def test_a_typo_is_ignored_and_named_with_the_setting_it_meant(tmp_path, text, given, meant):
    cfg = _load(tmp_path, text)
    assert cfg.warnings == [f"'{given}' is not a setting and was ignored - did you mean {meant}?"]
    assert config.redacted(cfg) == config.redacted(Config()), "the mistyped value took effect"


# ---------------------------------------------------------------- clamps

@pytest.mark.parametrize("text, key, given, used", [
    ("sleep:\n  max_attempts: 50\n", "sleep.max_attempts", "50", "10"),
    ("sleep:\n  max_attempts: 0\n", "sleep.max_attempts", "0", "1"),
    ("sleep:\n  core_chars: 20\n", "sleep.core_chars", "20", "100"),
])
def test_a_clamp_names_the_key_the_value_given_the_value_used_and_why(tmp_path, text, key, given, used):
    cfg = _load(tmp_path, text)
    assert len(cfg.warnings) == 1, cfg.warnings
    line = cfg.warnings[0]
    assert line.startswith(f"'{key}' = {given} is "), line
    assert line.endswith(f"; using {used}"), line
    assert "the most this setting takes" in line or "the least this setting takes" in line
    assert str(getattr(cfg.sleep, key.split(".")[1])) == used


def test_port_0_is_a_port_any_free_one(tmp_path):
    cfg = _load(tmp_path, "server:\n  port: 0\n")
    assert cfg.warnings == [] and cfg.server.port == 0


@pytest.mark.parametrize("given, used", [("debug", "DEBUG"), ("Warning", "WARNING"), ("warn", "WARNING")])
def test_log_level_takes_any_case(tmp_path, given, used):
    cfg = _load(tmp_path, f"server:\n  log_level: {given}\n")
    assert cfg.warnings == [] and cfg.server.log_level == used


def test_a_log_level_that_is_not_one_falls_back_named(tmp_path):
    cfg = _load(tmp_path, "server:\n  log_level: loud\n")
    assert cfg.warnings == ["'server.log_level' = 'loud' must be one of 'DEBUG', 'INFO', 'WARNING', 'ERROR'; "
                            "using the default 'INFO'"]


# ---------------------------------------------------------------- yaml errors

def test_a_tab_indented_file_names_the_line_the_column_and_the_tab(tmp_path):
    p = _write(tmp_path, "server:\n  host: \"127.0.0.1\"\n\tport: 7424\n")
    cfg = config.load(p, environ={}, announce=False)
    assert len(cfg.warnings) == 1, cfg.warnings
    line = cfg.warnings[0]
    assert line.startswith(f"config file {p} is not valid yaml at line 3, column 1: "), line
    assert "line 3 is indented with a tab" in line and "spaces" in line, line
    assert line.endswith("; running on defaults")
    assert config.redacted(cfg) == config.redacted(Config())


def test_a_yaml_error_without_a_tab_names_its_position_and_no_tab(tmp_path):
    cfg = _load(tmp_path, "server:\n    port: 1\n  host: 2\n")
    line = cfg.warnings[0]
    assert "is not valid yaml at line 3, column 3: " in line, line
    assert "tab" not in line


# ---------------------------------------------------------------- bearer pointers

def test_an_env_pointer_to_an_unset_variable_is_named_with_what_it_means(tmp_path, caplog):
    # set, or behind an inline token, a pointer says nothing
    assert _load(tmp_path, "server:\n  bearer_token_env: HX_TOKEN\n", environ={"HX_TOKEN": "t"}).warnings == []
    assert _load(tmp_path, "memory:\n  bearer_token: \"abc\"\n  bearer_token_env: UNSET_X\n").warnings == []
    with caplog.at_level(logging.WARNING):
        cfg = _load(tmp_path, "server:\n  bearer_token_env: HX_TOKEN\n", environ={"OTHER": "x"})
    assert cfg.warnings == ["'server.bearer_token_env' names HX_TOKEN, which is not set in the environment: "
                            "the service runs without a bearer on 127.0.0.1:7424 (loopback: this box only)"]
    assert not [r for r in caplog.records if r.name.startswith("seren_meninges")], "the library spoke too"


def test_an_empty_variable_beyond_loopback_says_the_service_refuses(tmp_path):
    cfg = _load(tmp_path, "server:\n  host: 0.0.0.0\n  bearer_token_env: HX_TOKEN\n", environ={"HX_TOKEN": ""})
    assert cfg.warnings == ["'server.bearer_token_env' names HX_TOKEN, which is empty in the environment: "
                            "the service refuses to start on 0.0.0.0:7424: beyond loopback it needs a bearer"]


def test_each_block_with_a_pointer_gets_its_own_line(tmp_path):
    cfg = _load(tmp_path, "memory:\n  token_env: MEM_T\nnotify:\n  bearer_token_env: NOTE_T\n"
                          "ripple:\n  bearer_token_env: RIP_T\n"
                          "model:\n  lifecycle:\n    observatory_token_env: OBS_T\n")
    assert len(cfg.warnings) == 4, cfg.warnings
    for var, path, meaning in [("MEM_T", "memory.bearer_token_env", "requests to Memory carry no bearer"),
                               ("NOTE_T", "notify.bearer_token_env", "webhook posts carry no bearer"),
                               ("RIP_T", "ripple.bearer_token_env", "endpoint ripples carry no bearer"),
                               ("OBS_T", "model.lifecycle.observatory_token_env",
                                "calls to the Observatory carry no bearer")]:
        assert any(w.startswith(f"'{path}' names {var}, which is not set") and meaning in w
                   for w in cfg.warnings), (var, cfg.warnings)


def test_a_missing_keyring_entry_is_named(tmp_path):
    cfg = _load(tmp_path, "server:\n  bearer_token_keyring: \"seren-test-none/nobody\"\n")
    assert len(cfg.warnings) == 1, cfg.warnings
    line = cfg.warnings[0]
    assert line.startswith("'server.bearer_token_keyring' = 'seren-test-none/nobody' yields no token ("), line
    assert "the service runs without a bearer" in line


def test_resolving_a_pointer_that_yields_nothing_prints_nothing(monkeypatch, caplog):
    monkeypatch.delenv("HX_UNSET_TOKEN", raising=False)
    block = config.ServerConfig(bearer_token_env="HX_UNSET_TOKEN")
    with caplog.at_level(logging.DEBUG):
        assert block.resolve_bearer() == "" and block.resolve_bearer() == ""
    assert not [r for r in caplog.records if r.name.startswith("seren_meninges")]
    monkeypatch.setenv("HX_UNSET_TOKEN", "tok")
    assert block.resolve_bearer() == "tok"


# ---------------------------------------------------------------- the split

def test_the_loader_is_its_own_module_and_config_keeps_its_names():
    from hippocampus.config import loader as config_load

    for name in ("load", "build", "redacted", "resolve_path"):
        assert getattr(config, name) is getattr(config_load, name)
    assert {"load", "build", "Config", "resolve_pointer", "_all_paths"} <= set(dir(config))
    with pytest.raises(AttributeError):
        config.no_such_name  # noqa: B018


# ---------------------------------------------------------------- not a number

@pytest.mark.parametrize("text, environ", [
    ("memory:\n  timeout_seconds: .nan\n", {}),              # yaml's own float NaN
    ("memory:\n  timeout_seconds: nan\n", {}),               # a string float() reads as NaN
    ("", {"SEREN_HIPPOCAMPUS_MEMORY_TIMEOUT_SECONDS": "NaN"}),
])
def test_a_timeout_that_is_not_a_number_is_named_and_memory_is_still_reached(tmp_path, memory, text, environ):
    from hippocampus.memory import MemoryClient

    cfg = _load(tmp_path, f"memory:\n  url: {memory.url}\n" + text.replace("memory:\n", ""), environ)
    assert cfg.memory.timeout_seconds == 30.0
    assert len(cfg.warnings) == 1 and "is not a number" in cfg.warnings[0], cfg.warnings
    # NaN taken as a timeout: every call's deadline is already past, and Memory "does not answer" while it is up
    assert MemoryClient(cfg.memory.url, timeout=cfg.memory.timeout_seconds).health()["ok"] is True


@pytest.mark.parametrize("text, environ, words", [
    ("memory:\n  timeout_seconds: .inf\n", {}, "is not a finite number"),
    ("", {"SEREN_HIPPOCAMPUS_MEMORY_TIMEOUT_SECONDS": "inf"}, "is not a finite number"),
    # finite, but past what a socket or a thread's wait takes (about 9.2e9 s): the same OverflowError as inf
    ("memory:\n  timeout_seconds: 1e10\n", {}, "longer than any clock here waits"),
    ("", {"SEREN_HIPPOCAMPUS_MEMORY_TIMEOUT_SECONDS": "99999999999"}, "longer than any clock here waits"),
])
def test_an_endless_timeout_is_named_and_memory_is_still_read(tmp_path, memory, text, environ, words):
    from hippocampus.memory import MemoryClient

    cfg = _load(tmp_path, f"memory:\n  url: {memory.url}\n" + text.replace("memory:\n", ""), environ)
    assert cfg.memory.timeout_seconds == 30.0
    assert len(cfg.warnings) == 1 and words in cfg.warnings[0], cfg.warnings
    # taken as a timeout: the socket refuses it (OverflowError, no MemoryError_), and the deadline watcher dies
    assert MemoryClient(cfg.memory.url, timeout=cfg.memory.timeout_seconds).shorts() == []


@pytest.mark.parametrize("text", [
    "model:\n  extra_body:\n    temperature: .nan\n",
    "model:\n  extra_body:\n    chat_template_kwargs: {enable_thinking: false, budget: .inf}\n",
    "model:\n  extra_body:\n    samplers: [1.0, -.inf]\n",
])
def test_a_number_json_cannot_carry_in_extra_body_is_named_and_the_default_used(tmp_path, text):
    """Found: NaN or infinity inside model.extra_body loaded silently; every model call then sent a body no JSON
    reader takes, and `check-config --json` printed a document that is not JSON."""
    import json

    cfg = _load(tmp_path, text)
    assert cfg.model.extra_body == Config().model.extra_body
    assert len(cfg.warnings) == 1 and "model.extra_body" in cfg.warnings[0] \
        and "which JSON cannot carry" in cfg.warnings[0], cfg.warnings
    json.dumps(config.redacted(cfg), allow_nan=False)


@pytest.mark.parametrize("by_env", [False, True])
def test_a_state_path_that_is_a_folder_is_named_and_never_taken(tmp_path, by_env):
    """Found: sleep.state_path naming a folder (~/.seren-hippocampus, the state folder itself) loaded silently; at
    start the service read the folder as its state file, 'moved it aside' (renamed the whole folder to
    <folder>.corrupt-<time>) and started clean, and check-config said nothing."""
    folder = tmp_path / "state-folder"
    folder.mkdir()
    (folder / "state.json").write_text("{}", encoding="utf-8")
    environ = {"SEREN_HIPPOCAMPUS_SLEEP_STATE_PATH": str(folder)} if by_env else {}
    cfg = _load(tmp_path, "" if by_env else f"sleep:\n  state_path: {folder}\n", environ)
    assert cfg.sleep.resolved_state_path() != folder
    assert len(cfg.warnings) == 1 and str(folder) in cfg.warnings[0] and "folder" in cfg.warnings[0], cfg.warnings
    assert "state.json" in cfg.warnings[0], cfg.warnings        # what to write instead


@pytest.mark.parametrize("given", ["127.0.0.1:7424", "http://127.0.0.1", "[::1]", "box lan"])
def test_a_server_host_that_is_no_host_is_named_and_loopback_used(tmp_path, given):
    """Found: server.host with its port ('127.0.0.1:7424'), a scheme, a space or brackets loaded silently and
    check-config said "no warnings"; the service then refused to start ('cannot listen on 127.0.0.1:7424:7424:
    ... is not a host name or address this machine can resolve'), or said it needed a bearer 'beyond loopback'."""
    cfg = _load(tmp_path, f"server:\n  host: {given!r}\n")
    assert cfg.server.host == "127.0.0.1"
    assert len(cfg.warnings) == 1 and f"'server.host' = {given!r}" in cfg.warnings[0], cfg.warnings
    env = config.build({}, environ={"SEREN_HIPPOCAMPUS_HOST": given})
    assert env.server.host == "127.0.0.1" and len(env.warnings) == 1, env.warnings


@pytest.mark.parametrize("given", ["0.0.0.0", "::", "::1", "localhost", "Box.lan", "192.168.1.20", "my_box"])
def test_a_server_host_that_is_one_is_taken(tmp_path, given):
    cfg = _load(tmp_path, f"server:\n  host: {given!r}\n")
    assert cfg.server.host == given and not cfg.warnings, cfg.warnings


@pytest.mark.parametrize("text, key", [
    ("ripple:\n  messages:\n    draft_submitted: .nan\n", "ripple.messages"),
    ("ripple:\n  messages:\n    chain_closed: [1, -.inf]\n", "ripple.messages"),
])
def test_a_number_json_cannot_carry_in_ripple_messages_is_named_and_check_config_json_is_json(tmp_path, text, key):
    """Found: .nan in ripple.messages loaded as given (the ripple then woke the main model with the message 'nan'),
    and `check-config --json` printed 'NaN', which no JSON reader takes, with 'no warnings' and exit 0."""
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--offline", "--json", "--config",
                        _write(tmp_path, text)], capture_output=True, text=True, encoding="utf-8", timeout=60)
    rep = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"check-config --json printed {c}"))
    assert r.returncode == 1 and [w for w in rep["warnings"] if key in w and "JSON cannot carry" in w], rep["warnings"]


@pytest.mark.parametrize("entry", ["{url: 'http://127.0.0.1:8081/v1', timeout_seconds: .nan}",
                                   "{url: 'http://127.0.0.1:8081/v1', extra_body: {top_p: .inf}}"])
def test_check_config_json_is_json_with_a_replay_candidate_holding_nan(tmp_path, entry):
    """Found: a replay candidate with a .nan timeout or an .inf in its extra_body is named and put right for the
    replay, but the config as written stays in the report, and `check-config --json` printed NaN / Infinity."""
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--offline", "--json", "--config",
                        _write(tmp_path, f"replay:\n  candidates:\n    c: {entry}\n")],
                       capture_output=True, text=True, encoding="utf-8", timeout=60)
    rep = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"check-config --json printed {c}"))
    assert r.returncode == 1 and [w for w in rep["warnings"] if "replay.candidates.c" in w], rep["warnings"]


@pytest.mark.parametrize("text, environ, said", [
    ('ripple:\n  command: \'claude -p "{message}\'\n', {}, "'ripple.command' = 'claude -p \"{message}'"),
    ("", {"SEREN_HIPPOCAMPUS_RIPPLE_COMMAND": 'claude -p "{message}'},
     "SEREN_HIPPOCAMPUS_RIPPLE_COMMAND='claude -p \"{message}'"),
])
def test_a_command_line_with_an_open_quote_says_to_close_it(tmp_path, text, environ, said):
    """Found: the loader passed on the splitter's own words ("... No closing quotation; using the default ...")."""
    cfg = _load(tmp_path, text, environ)
    assert cfg.ripple.command == ["claude", "-p", "{message}"]
    assert cfg.warnings[0].startswith(f"{said} cannot be read as a command line (no closing quotation): close its "
                                      "quotes; "), cfg.warnings


@pytest.mark.parametrize("data, where", [("\xe9t\xe9: 1\n".encode("latin-1"), "byte 0xe9 at position 0"),
                                         ("server:\n  port: 7500\n".encode("utf-16"), "byte 0xff at position 0")])
def test_a_file_that_is_not_utf8_says_to_save_it_as_utf8(tmp_path, data, where):
    """Found: "could not be read ('utf-8' codec can't decode byte 0xe9 in position 0: invalid continuation byte)"."""
    p = tmp_path / "h.yaml"
    p.write_bytes(data)
    cfg = config.load(str(p), environ={}, announce=False)
    assert cfg.warnings == [f"config file {p} is not UTF-8 text ({where}): save it as UTF-8; running on defaults"]


def _load_in_a_fenced_child(path: str) -> list:
    """config.load(path)'s warnings, from a child held to 1 GiB and 30 s (an endless read must not take the box)."""
    import json
    import resource
    import subprocess
    import sys

    def fence() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    code = ("import json, sys; from hippocampus import config; "
            "print(json.dumps(config.load(sys.argv[1], environ={}, announce=False).warnings))")
    try:
        done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, timeout=30,
                              preexec_fn=fence)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading the config {path} did not finish in 30 s")
    assert done.returncode == 0, done.stderr[-600:]
    return json.loads(done.stdout)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs or /dev/zero here")
def test_a_config_path_that_is_no_file_is_refused_in_words_not_read_for_ever(tmp_path):
    """Found: --config /dev/zero (or $SEREN_HIPPOCAMPUS_CONFIG naming it) read until memory ran out, and a FIFO
    with no writer hung the start for good."""
    import os

    fifo = tmp_path / "h.fifo"
    os.mkfifo(fifo)
    assert _load_in_a_fenced_child("/dev/zero") == [
        "config file /dev/zero is not a regular file (a character device): name the yaml file itself; running on "
        "defaults"]
    assert _load_in_a_fenced_child(str(fifo)) == [
        f"config file {fifo} is not a regular file (a FIFO): name the yaml file itself; running on defaults"]


def test_a_config_file_past_the_bound_is_refused_unread(tmp_path):
    from hippocampus.config.loader import CONFIG_BYTES

    p = tmp_path / "h.yaml"
    p.write_bytes(b"# padding\n" * (CONFIG_BYTES // 10 + 1))
    cfg = config.load(str(p), environ={}, announce=False)
    assert cfg.warnings == [f"config file {p} is larger than {CONFIG_BYTES // (1 << 20)} MiB, more than any config "
                            "needs: name the yaml file itself; running on defaults"]
