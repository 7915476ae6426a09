"""The config: every default, where the file comes from, and how leniently it is read."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hippocampus import config
from hippocampus.config import Config

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "deploy" / "seren-hippocampus.yaml.sample"

# Every key of every block, with the default the brief and config.py agree on.
DEFAULTS = {
    "server": {"host": "127.0.0.1", "port": 7424, "bearer_token": "", "bearer_token_env": "",
               "bearer_token_keyring": "", "allow_open_lan": False, "threads": 8, "max_body_bytes": 1_048_576,
               "allowed_hosts": [], "allowed_origins": [], "connection_limit": 400, "header_timeout_seconds": 5.0,
               "body_timeout_seconds": 10.0, "min_body_bytes_per_second": 1024, "connection_share": 0.6,
               "channel_timeout_seconds": 30.0, "log_level": "INFO", "mcp_preload": False, "mcp_mount": "/mcp",
               "mcp_allowed_hosts": [], "mcp_allowed_origins": []},
    "tls": {"trust_system_store": False},
    "memory": {"url": "http://127.0.0.1:7420", "bearer_token": "", "bearer_token_env": "",
               "bearer_token_keyring": "", "timeout_seconds": 30.0},
    "model": {"url": "http://localhost:8090/v1", "name": "default", "timeout_seconds": 120.0, "max_tokens": 2000,
              "parallel": 1,
              "temperature": 0.2, "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
              "structured": "auto", "write": "auto"},
    "model.lifecycle": {"manage": False, "server": "", "model_path": "", "server_args": "-ngl 99 -c 8192",
                        "start": "", "stop": "", "cwd": "", "observatory_url": "", "observatory_service": "",
                        "observatory_token": "", "observatory_token_env": "", "observatory_token_keyring": "",
                        "health_url": "", "ready_timeout_seconds": 240.0, "poll_seconds": 2.0,
                        "keep_warm_seconds": 300.0, "handover": False, "retry_after_seconds": 900.0,
                        "stop_grace_seconds": 20.0},
    "sleep": {"mode": "thread", "interval_seconds": 72000.0, "at": "", "tick_seconds": 300.0, "tend_cycle": True,
              "tend_interval_seconds": 600.0, "nudge_wait_seconds": 180.0, "max_entries_per_run": 500,
              "promote_min_evidence": 3, "pile_max": 12, "max_attempts": 3, "candidate_cores": 8,
              "core_chars": 600, "gap_grace_intervals": 3.0, "brief_request": True, "brief_check_misses": 3,
              "brief_pull": False, "state_path": "~/.seren-hippocampus/state.json"},
    "sleep.budget": {"calls": 60, "answer_tokens": 60000, "wall_seconds": 3600.0, "cut_in_a_row": 3},
    "notify": {"webhook_url": "", "bearer_token": "", "bearer_token_env": "", "bearer_token_keyring": "",
               "events": ["draft_submitted", "sleep_failed", "chain_closed", "purged"], "timeout_seconds": 10.0},
    "ripple": {"type": "", "command": ["claude", "-p", "{message}"], "cwd": "", "run_as": "", "stdin": False,
               "timeout_seconds": 900.0, "url": "", "bearer_token": "", "bearer_token_env": "",
               "bearer_token_keyring": "",
               "events": ["brief_requested", "draft_submitted", "tend_resubmitted", "brief_unmatched"],
               "messages": {}},
    "voice": {"enabled": False, "max_chars": 1500},
    "supervisor": {"max_restarts": 3, "window_seconds": 60.0, "backoff_seconds": 0.2, "check_seconds": 0.5},
    "events": {"keep": 500},
}


def _block(cfg: Config, dotted: str):
    obj = cfg
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _write(tmp_path: Path, text: str, name: str = "h.yaml", encoding: str = "utf-8") -> str:
    p = tmp_path / name
    p.write_text(text, encoding=encoding)
    return str(p)


def _load(path: str) -> Config:
    return config.load(path, environ={}, announce=False)


def _defaults_only(cfg: Config) -> bool:
    return config.redacted(cfg) == config.redacted(Config())


# ---------------------------------------------------------------- defaults

@pytest.mark.parametrize("block", sorted(DEFAULTS))
def test_every_default(block):
    obj = _block(Config(), block)
    expected = DEFAULTS[block]
    fields = {f.name for f in dataclasses.fields(obj)} - {"lifecycle", "budget"}
    assert fields == set(expected), f"{block}: the test's table and config.py list different keys"
    for key, want in expected.items():
        got = getattr(obj, key)
        assert got == want and type(got) is type(want), f"{block}.{key} = {got!r}, expected {want!r}"


def test_the_brief_defaults_by_name():
    c = Config()
    assert c.sleep.tick_seconds == 300
    assert c.sleep.tend_cycle is True
    assert c.sleep.tend_interval_seconds == 600
    assert c.sleep.nudge_wait_seconds == 180
    assert c.model.max_tokens == 2000
    assert c.sleep.pile_max == 12
    assert c.sleep.heartbeat() == 300
    assert c.path is None and c.warnings == []


def test_list_and_dict_defaults_are_not_shared():
    a, b = Config(), Config()
    a.notify.events.append("x")
    a.ripple.command.append("y")
    a.model.extra_body["z"] = 1
    assert b.notify.events == DEFAULTS["notify"]["events"]
    assert b.ripple.command == DEFAULTS["ripple"]["command"]
    assert "z" not in b.model.extra_body


# ---------------------------------------------------------------- where the file comes from

def test_path_order(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    cli = _write(tmp_path, "server: {port: 7001}\n", "cli.yaml")
    env = _write(tmp_path, "server: {port: 7002}\n", "env.yaml")
    env_map = {"SEREN_HIPPOCAMPUS_CONFIG": env}

    # 4. nothing anywhere: no file, all defaults
    assert config.resolve_path(None, environ={}) is None
    cfg = config.load(None, environ={}, announce=False)
    assert cfg.path is None and cfg.warnings == [] and _defaults_only(cfg)

    # 3. the home default, once it exists
    home_file = home / "seren-hippocampus" / "seren-hippocampus.yaml"
    home_file.parent.mkdir(parents=True)
    home_file.write_text("server: {port: 7003}\n", encoding="utf-8")
    assert config.resolve_path(None, environ={}) == str(home_file)
    assert config.load(None, environ={}, announce=False).server.port == 7003

    # 2. $SEREN_HIPPOCAMPUS_CONFIG beats the home file
    assert config.resolve_path(None, environ=env_map) == env
    assert config.load(None, environ=env_map, announce=False).server.port == 7002

    # 1. --config beats both
    assert config.resolve_path(cli, environ=env_map) == cli
    cfg = config.load(cli, environ=env_map, announce=False)
    assert cfg.server.port == 7001 and cfg.path == cli


def test_paths_are_user_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    _write(tmp_path, "server: {port: 7005}\n", "mine.yaml")
    assert config.resolve_path("~/mine.yaml", environ={}) == str(tmp_path / "mine.yaml")
    assert config.resolve_path(None, environ={"SEREN_HIPPOCAMPUS_CONFIG": "~/mine.yaml"}) == \
        str(tmp_path / "mine.yaml")
    assert config.load("~/mine.yaml", environ={}, announce=False).server.port == 7005


# ---------------------------------------------------------------- reading leniently

def test_a_utf8_file_with_a_bom_loads(tmp_path):
    p = _write(tmp_path, "server:\n  port: 7500\nmodel:\n  name: \"k\u00f6nig\"\n", encoding="utf-8-sig")
    assert Path(p).read_bytes().startswith(b"\xef\xbb\xbf")
    cfg = _load(p)
    assert cfg.warnings == []
    assert cfg.server.port == 7500 and cfg.model.name == "k\u00f6nig"


@pytest.mark.parametrize("text, words", [
    (None, "does not exist"),
    ("server: [port: 1\n  what: {\n", "is not valid yaml"),
    ("- server\n- memory\n", "does not hold a mapping"),
])
def test_missing_malformed_and_list_files_give_one_warning_and_defaults(tmp_path, caplog, text, words):
    p = str(tmp_path / "absent.yaml") if text is None else _write(tmp_path, text)
    with caplog.at_level("WARNING", logger="hippocampus.config"):
        cfg = config.load(p, environ={})
    assert len(cfg.warnings) == 1, cfg.warnings
    assert words in cfg.warnings[0] and p in cfg.warnings[0]
    assert "defaults" in cfg.warnings[0]
    assert _defaults_only(cfg)
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("hippocampus.config")]
    assert len(logged) == 1 and words in logged[0]


def test_an_empty_file_is_defaults_without_a_warning(tmp_path):
    cfg = _load(_write(tmp_path, "# nothing here\n"))
    assert cfg.warnings == [] and _defaults_only(cfg)


@pytest.mark.parametrize("yaml_text, misplaced, belongs, unchanged", [
    ("model:\n  lifecycle:\n    max_tokens: 50\n", "model.lifecycle.max_tokens", "model.max_tokens",
     lambda c: c.model.max_tokens == 2000),
    ("sleep:\n  webhook_url: \"http://example.invalid/hook\"\n", "sleep.webhook_url", "notify.webhook_url",
     lambda c: c.notify.webhook_url == ""),
    ("server:\n  keep_warm_seconds: 5\n", "server.keep_warm_seconds", "model.lifecycle.keep_warm_seconds",
     lambda c: c.model.lifecycle.keep_warm_seconds == 300.0),
    ("memory:\n  pile_max: 3\n", "memory.pile_max", "sleep.pile_max", lambda c: c.sleep.pile_max == 12),
])
def test_did_you_mean_for_a_misplaced_key(tmp_path, yaml_text, misplaced, belongs, unchanged):
    cfg = _load(_write(tmp_path, yaml_text))
    assert cfg.warnings == [f"'{misplaced}' is not a setting and was ignored - did you mean {belongs}?"]
    assert unchanged(cfg), "the misplaced value took effect"
    assert _defaults_only(cfg)


def test_a_key_with_two_homes_names_both_and_an_unknown_key_names_none(tmp_path):
    cfg = _load(_write(tmp_path, "voice:\n  bearer_token_env: X\nsleep:\n  colour: blue\n"))
    assert len(cfg.warnings) == 2
    two, none = cfg.warnings
    assert two.startswith("'voice.bearer_token_env' is not a setting and was ignored - did you mean ")
    for home in ("server.bearer_token_env", "memory.bearer_token_env", "notify.bearer_token_env",
                 "ripple.bearer_token_env"):
        assert home in two
    assert none == "'sleep.colour' is not a setting and was ignored"


@pytest.mark.parametrize("yaml_text, key, raw, default", [
    ("server:\n  port: \"abc\"\n", "server.port", "'abc'", "7424"),
    ("sleep:\n  interval_seconds: -5\n", "sleep.interval_seconds", "-5", "72000.0"),
    ("sleep:\n  tend_interval_seconds: -1\n", "sleep.tend_interval_seconds", "-1", "600.0"),
    ("sleep:\n  at: \"25:99\"\n", "sleep.at", "'25:99'", "''"),
    ("sleep:\n  mode: \"sometimes\"\n", "sleep.mode", "'sometimes'", "'thread'"),
    ("voice:\n  max_chars: 9000\n", "voice.max_chars", "9000", "1500"),
    ("ripple:\n  type: \"carrier-pigeon\"\n", "ripple.type", "'carrier-pigeon'", "''"),
])
def test_a_bad_value_falls_back_with_a_line_naming_key_value_and_default(tmp_path, yaml_text, key, raw, default):
    cfg = _load(_write(tmp_path, yaml_text))
    assert len(cfg.warnings) == 1, cfg.warnings
    line = cfg.warnings[0]
    assert line.startswith(f"'{key}' = {raw} ")
    assert line.endswith(f"using the default {default}")
    assert _defaults_only(cfg)


def test_one_bad_value_leaves_the_rest_of_its_block_alone(tmp_path):
    cfg = _load(_write(tmp_path, "sleep:\n  at: \"25:99\"\n  pile_max: 4\n  interval_seconds: 600\n"))
    assert len(cfg.warnings) == 1
    assert cfg.sleep.at == "" and cfg.sleep.pile_max == 4 and cfg.sleep.interval_seconds == 600.0


def test_good_values_are_coerced(tmp_path):
    cfg = _load(_write(tmp_path, "server:\n  port: \"7600\"\n  allow_open_lan: \"yes\"\n  log_level: debug\n"
                                 "sleep:\n  at: \"03:30\"\n  mode: EXTERNAL\n"
                                 "ripple:\n  command: \"my-tool --say {message}\"\n"))
    assert cfg.warnings == []
    assert cfg.server.port == 7600 and cfg.server.allow_open_lan is True and cfg.server.log_level == "DEBUG"
    assert cfg.sleep.at == "03:30" and cfg.sleep.mode == "external"
    assert cfg.ripple.command == ["my-tool", "--say", "{message}"]


def test_a_bad_secret_is_not_echoed(tmp_path):
    cfg = _load(_write(tmp_path, "server:\n  bearer_token: [\"hunter2-secret\"]\n"))
    assert len(cfg.warnings) == 1
    assert "hunter2-secret" not in cfg.warnings[0] and "(hidden)" in cfg.warnings[0]
    assert cfg.server.bearer_token == ""


def test_a_block_that_is_not_a_mapping_uses_its_defaults(tmp_path):
    cfg = _load(_write(tmp_path, "sleep: 5\nserver:\n  port: 7601\n"))
    assert len(cfg.warnings) == 1 and "'sleep' should be a block" in cfg.warnings[0]
    assert cfg.sleep == Config().sleep and cfg.server.port == 7601


def test_memory_token_aliases(tmp_path):
    cfg = _load(_write(tmp_path, "memory:\n  token: \"abc\"\n  token_env: \"MEM_TOKEN\"\n"
                                 "  token_keyring: \"seren/memory\"\n"))
    assert cfg.warnings == []
    assert cfg.memory.bearer_token == "abc"
    assert cfg.memory.bearer_token_env == "MEM_TOKEN"
    assert cfg.memory.bearer_token_keyring == "seren/memory"


def test_a_memory_alias_is_dropped_when_the_long_key_is_set(tmp_path):
    cfg = _load(_write(tmp_path, "memory:\n  bearer_token: \"long\"\n  token: \"short\"\n"))
    assert cfg.warnings == []
    assert cfg.memory.bearer_token == "long"


def test_docket_submitted_is_draft_submitted(tmp_path):
    cfg = _load(_write(tmp_path, "notify:\n  events: [docket_submitted, purged]\n"
                                 "ripple:\n  events: [docket_submitted]\n"))
    assert cfg.warnings == []
    assert cfg.notify.events == ["draft_submitted", "purged"]
    assert cfg.ripple.events == ["draft_submitted"]


@pytest.mark.parametrize("raw, want", [("off", ""), ("none", ""), ("OFF", ""), ("Script", "script"),
                                       ("endpoint", "endpoint")])
def test_ripple_type(tmp_path, raw, want):
    cfg = _load(_write(tmp_path, f"ripple:\n  type: \"{raw}\"\n"))
    assert cfg.warnings == []
    assert cfg.ripple.type == want


def test_yaml_off_without_quotes_is_also_off(tmp_path):
    cfg = _load(_write(tmp_path, "ripple:\n  type: off\n"))
    assert cfg.ripple.type == ""


def test_env_overrides(tmp_path):
    p = _write(tmp_path, "server:\n  port: 7700\nmemory:\n  url: \"http://a:1/\"\n")
    cfg = config.load(p, environ={"SEREN_HIPPOCAMPUS_PORT": "7701", "SEREN_HIPPOCAMPUS_HOST": "127.0.0.2",
                                  "SEREN_HIPPOCAMPUS_MEMORY_URL": "http://b:2", "SEREN_HIPPOCAMPUS_MODEL_URL": ""},
                      announce=False)
    assert cfg.warnings == []
    assert (cfg.server.port, cfg.server.host, cfg.memory.url, cfg.model.url) == (7701, "127.0.0.2", "http://b:2", "")
    assert not cfg.model.configured
    bad = config.load(p, environ={"SEREN_HIPPOCAMPUS_PORT": "nope"}, announce=False)
    assert bad.server.port == 7700 and len(bad.warnings) == 1 and "'nope'" in bad.warnings[0]


# ---------------------------------------------------------------- the sample never drifts

def test_the_sample_loads_without_a_warning_and_equals_the_defaults():
    cfg = _load(str(SAMPLE))
    assert cfg.warnings == []
    want, got = config.redacted(Config()), config.redacted(cfg)
    assert list(got) == list(want)
    for block in want:
        assert got[block] == want[block], f"the sample's {block} block differs from config.py"
    for f in dataclasses.fields(Config):
        if f.name not in config.NOT_SETTINGS:       # about the config (its file, warnings, sources), not settings
            assert getattr(cfg, f.name) == getattr(Config(), f.name), f.name


def test_the_sample_names_every_key_with_a_comment():
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    keyed = {}
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("- "):
            continue
        key = stripped.split(":", 1)[0]
        keyed.setdefault(key, []).append(line)

    def walk(cls, prefix=""):
        for f in dataclasses.fields(cls):
            if f.name in config.NOT_SETTINGS:
                continue
            sub = config._block_type(cls, f.name)
            if sub is not None:
                yield from walk(sub, f"{prefix}{f.name}.")
            else:
                yield f"{prefix}{f.name}", f.name

    for dotted, leaf in walk(Config):
        assert leaf in keyed, f"{dotted} is missing from the sample"
        assert any(" # " in ln for ln in keyed[leaf]), f"{dotted} has no comment in the sample"


# ---------------------------------------------------------------- check-config

def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}


def _check_config(path: str) -> subprocess.CompletedProcess:
    # --offline: the config alone (these configs name a Memory and a model that are not running here)
    return subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--offline", "--config", path],
                          capture_output=True, text=True, encoding="utf-8", env=_env(), cwd=str(ROOT), timeout=60)


def _printed_config(stdout: str) -> dict:
    return json.loads(stdout.split("\n# config file:", 1)[0])


def test_check_config_prints_the_resolved_config_with_secrets_hidden(tmp_path):
    secret, mem_secret = "s3cret-bearer-value-9f8e", "memory-secret-7a6b"
    p = _write(tmp_path, f"server:\n  bearer_token: \"{secret}\"\n  port: 7702\n"
                         f"memory:\n  token: \"{mem_secret}\"\n"
                         f"model:\n  lifecycle:\n    observatory_token: \"obs-secret-5c4d\"\n")
    r = _check_config(p)
    assert r.returncode == 0, r.stdout + r.stderr
    for s in (secret, mem_secret, "obs-secret-5c4d"):
        assert s not in r.stdout and s not in r.stderr
    shown = _printed_config(r.stdout)
    assert shown["server"]["bearer_token"] == "(set)"
    assert shown["memory"]["bearer_token"] == "(set)"
    assert shown["model"]["lifecycle"]["observatory_token"] == "(set)"
    assert shown["server"]["port"] == 7702
    assert f"# config file: {p}" in r.stdout
    assert "warning:" not in r.stdout


def test_check_config_prints_every_warning_and_exits_1(tmp_path):
    p = _write(tmp_path, "server:\n  port: \"abc\"\n  bearer_token: \"tok-1234-secret\"\n"
                         "sleep:\n  at: \"25:99\"\n  webhook_url: \"http://x\"\n")
    r = _check_config(p)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "tok-1234-secret" not in r.stdout
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert len(warnings) == 3, r.stdout
    assert any("'server.port' = 'abc'" in w and "7424" in w for w in warnings)
    assert any("'sleep.at' = '25:99'" in w for w in warnings)
    assert any("did you mean notify.webhook_url?" in w for w in warnings)
    shown = _printed_config(r.stdout)
    assert shown["server"]["port"] == 7424 and shown["sleep"]["at"] == ""


def test_check_config_on_the_sample_is_clean():
    r = _check_config(str(SAMPLE))
    assert r.returncode == 0, r.stdout + r.stderr
    assert _printed_config(r.stdout) == config.redacted(Config())
