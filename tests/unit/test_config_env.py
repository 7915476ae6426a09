"""Environment overrides are one rule: every setting `block.key` is SEREN_HIPPOCAMPUS_BLOCK_KEY (the server's
keys by their bare name too), checked like a yaml value; the variables that worked before keep working."""
from __future__ import annotations

from hippocampus import config


def _load(tmp_path, environ, text="server:\n  port: 7700\n"):
    p = tmp_path / "h.yaml"
    p.write_text(text, encoding="utf-8")
    return config.load(str(p), environ=environ, announce=False)


def test_the_variables_that_worked_before_still_do(tmp_path):
    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_HOST": " 0.0.0.0 ", "SEREN_HIPPOCAMPUS_PORT": "7701",
                           "SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN": "yes", "SEREN_HIPPOCAMPUS_LOG_LEVEL": "debug",
                           "SEREN_HIPPOCAMPUS_MEMORY_URL": "http://m:1/", "SEREN_HIPPOCAMPUS_MODEL_URL": ""})
    assert cfg.warnings == []
    assert (cfg.server.host, cfg.server.port, cfg.server.allow_open_lan, cfg.server.log_level) == \
        ("0.0.0.0", 7701, True, "DEBUG")
    assert cfg.memory.url == "http://m:1" and not cfg.model.configured     # an empty model url: no model


def test_any_setting_is_overridden_by_its_block_and_key(tmp_path):
    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS": "5", "SEREN_HIPPOCAMPUS_SERVER_PORT": "7702",
                           "SEREN_HIPPOCAMPUS_MODEL_LIFECYCLE_KEEP_WARM_SECONDS": "30",
                           "SEREN_HIPPOCAMPUS_NOTIFY_EVENTS": "purged chain_closed"})
    assert cfg.warnings == []
    assert (cfg.sleep.tick_seconds, cfg.server.port, cfg.model.lifecycle.keep_warm_seconds) == (5.0, 7702, 30.0)
    assert cfg.notify.events == ["purged", "chain_closed"]


def test_an_empty_variable_counts_as_unset(tmp_path):
    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_HOST": "  ", "SEREN_HIPPOCAMPUS_MEMORY_URL": ""},
                text="memory:\n  url: http://a:1\n")
    assert cfg.warnings == [] and cfg.server.host == "127.0.0.1" and cfg.memory.url == "http://a:1"


def test_a_value_that_cannot_be_used_names_the_variable_and_keeps_the_setting(tmp_path):
    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_LOG_LEVEL": "loud", "SEREN_HIPPOCAMPUS_PORT": "70000",
                           "SEREN_HIPPOCAMPUS_SLEEP_MAX_ATTEMPTS": "50"})
    assert cfg.server.log_level == "INFO" and cfg.server.port == 7700 and cfg.sleep.max_attempts == 10
    assert len(cfg.warnings) == 3, cfg.warnings
    level, port, attempts = sorted(cfg.warnings)
    assert level.startswith("SEREN_HIPPOCAMPUS_LOG_LEVEL='loud' must be one of ") and level.endswith("keeping 'INFO'")
    assert port == "SEREN_HIPPOCAMPUS_PORT='70000' must be 0 to 65535; keeping 7700"
    assert attempts == "SEREN_HIPPOCAMPUS_SLEEP_MAX_ATTEMPTS='50' is above 10, the most this setting takes; using 10"


def test_a_secret_from_the_environment_is_never_repeated(tmp_path):
    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_MEMORY_BEARER_TOKEN": "tok-secret"})
    assert cfg.memory.resolve_bearer() == "tok-secret" and config.redacted(cfg)["memory"]["bearer_token"] == "(set)"


def test_the_open_lan_variable_words_the_missing_bearer_line(tmp_path):
    text = "server:\n  host: 0.0.0.0\n  bearer_token_env: NO_SUCH_TOKEN_VAR\n"
    shut = _load(tmp_path, {}, text)
    opened = _load(tmp_path, {"SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN": "1"}, text)
    assert shut.warnings[0].endswith("the service refuses to start on 0.0.0.0:7424: beyond loopback it needs a bearer")
    assert opened.warnings[0].endswith("open to the network (allow_open_lan)")


def test_the_mcp_mount_hosts_and_origins_are_settings_the_old_variables_still_set(tmp_path):
    """server.mcp_mount / mcp_allowed_hosts / mcp_allowed_origins: in the yaml, or by the variables that set them
    before they were settings (the server's bare-name rule), a comma list as before; check-config shows them."""
    from hippocampus.cli.check import report

    cfg = _load(tmp_path, {"SEREN_HIPPOCAMPUS_MCP_MOUNT": "tools/mcp/",
                           "SEREN_HIPPOCAMPUS_MCP_ALLOWED_HOSTS": "box.lan:*, tool.lan:7424",
                           "SEREN_HIPPOCAMPUS_MCP_ALLOWED_ORIGINS": "http://tool.lan:3000"})
    assert cfg.warnings == []
    assert (cfg.server.mcp_mount, cfg.server.mcp_allowed_hosts, cfg.server.mcp_allowed_origins) == \
        ("/tools/mcp", ["box.lan:*", "tool.lan:7424"], ["http://tool.lan:3000"])
    shown = report(cfg, offline=True)
    assert shown["config"]["server"]["mcp_allowed_hosts"] == ["box.lan:*", "tool.lan:7424"]
    assert shown["environment"]["server.mcp_mount"] == "SEREN_HIPPOCAMPUS_MCP_MOUNT"
    cfg = _load(tmp_path, {}, text="server:\n  mcp_mount: ''\n  mcp_allowed_origins: [http://a.lan]\n")
    assert cfg.warnings == [] and cfg.server.mcp_mount == "/mcp" and cfg.server.mcp_allowed_origins == ["http://a.lan"]
    assert cfg.sources.of("server.mcp_allowed_origins") == "yaml" and cfg.sources.of("server.mcp_mount") == "yaml"


def test_the_family_s_trust_store_variable_turns_the_os_trust_store_on(tmp_path):
    """Found: SEREN_HIPPOCAMPUS_TRUST_SYSTEM_STORE, the family's spelling (a corporate install sets it in the unit),
    was ignored without a word, and the service fell back to certifi; only ..._TLS_TRUST_SYSTEM_STORE worked."""
    for name in ("SEREN_HIPPOCAMPUS_TRUST_SYSTEM_STORE", "SEREN_HIPPOCAMPUS_TLS_TRUST_SYSTEM_STORE"):
        cfg = _load(tmp_path, {name: "1"})
        assert cfg.warnings == [] and cfg.tls.trust_system_store is True, name
        assert cfg.sources.variables["tls.trust_system_store"] == name


def test_a_text_setting_with_spaces_around_it_is_read_alike_from_the_yaml_and_the_environment(tmp_path):
    """Found: the environment strips a value (SEREN_HIPPOCAMPUS_SLEEP_AT=" 03:30 " is 03:30) while the yaml kept
    the spaces of a quoted one: at: " 03:30 " was "not a local HH:MM time", host: " 0.0.0.0 " not a host, and
    state_path: " /srv/h/state.json" a relative path (a folder named " " wherever the service started)."""
    given = {"sleep": {"at": " 03:30 ", "state_path": f" {tmp_path}/state.json "},
             "server": {"host": " 0.0.0.0 "}, "ripple": {"url": " http://box:7430/ripple "}}
    text = "".join(f"{block}:\n" + "".join(f'  {k}: "{v}"\n' for k, v in keys.items())
                   for block, keys in given.items())
    from_yaml = _load(tmp_path, {}, text)
    from_env = config.build({}, environ={f"SEREN_HIPPOCAMPUS_{block}_{k}".upper(): v
                                         for block, keys in given.items() for k, v in keys.items()})
    for cfg in (from_yaml, from_env):
        assert cfg.warnings == []
        assert (cfg.sleep.at, cfg.sleep.state_path, cfg.server.host, cfg.ripple.url) == \
            ("03:30", f"{tmp_path}/state.json", "0.0.0.0", "http://box:7430/ripple")


def test_a_blank_config_variable_counts_as_unset_as_every_other_variable_does(tmp_path, monkeypatch):
    """Found: SEREN_HIPPOCAMPUS_CONFIG=' ' (a blank left by a unit file or a shell) was taken as the path ' ':
    'config file   does not exist; running on defaults', where every setting's blank variable counts as unset."""
    from hippocampus import config
    from hippocampus.config import loader

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("SEREN_HIPPOCAMPUS_CONFIG", "  ")
    home_file = home / "seren-hippocampus" / "seren-hippocampus.yaml"
    home_file.parent.mkdir(parents=True)
    home_file.write_text("server: {port: 7003}\n", encoding="utf-8")
    cfg = config.load(None, announce=False)
    assert (cfg.warnings, cfg.path, cfg.server.port) == ([], str(home_file), 7003)
    assert loader.path_from(None) == loader.FROM_DEFAULT
    monkeypatch.setenv("SEREN_HIPPOCAMPUS_CONFIG", f" {home_file} ")       # spaces around a path: as any value
    assert config.load(None, announce=False).path == str(home_file)
