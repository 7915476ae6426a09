"""--ripple-claude DIR and `ripple-claude DIR` (issue 23): reading Claude Code's settings and building the
command. The path rules are plain functions (Windows semantics tested here on Linux); the flag and the
command run as real subprocesses (`python -m hippocampus ...`) against a temporary HOME."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hippocampus.ripple import claude as cs
from hippocampus import config as cm

ROOT = Path(__file__).resolve().parents[2]
THREE = ["seren-hippocampus", "seren-loci", "seren-memory"]


# ---------------------------------------------------------------- the path rules, pure

@pytest.mark.parametrize("written", ["/srv/proj/", "/srv/proj//", "/srv//proj", "/srv/./proj", "/srv/x/../proj",
                                     "//srv/proj"])
def test_a_project_key_matches_after_normalisation_on_linux(written):
    projects = {written: {"mcpServers": {"a": {}}}, "/srv/other": {}}
    assert cs.find_project(projects, "/srv/proj", "linux") == written
    assert cs.normalise(written, "linux") == "/srv/proj"


def test_linux_does_not_fold_case_but_windows_and_macos_do():
    assert cs.folds_case("linux") is False
    assert cs.folds_case("win32") is True and cs.folds_case("darwin") is True
    assert cs.find_project({"/srv/Proj": {}}, "/srv/proj", "linux") is None
    assert cs.find_project({"/srv/Proj": {}}, "/srv/proj", "darwin") == "/srv/Proj"


@pytest.mark.parametrize("written", ["C:/Users/Alice/Proj/", "c:\\users\\alice\\proj", "C:\\Users\\ALICE\\Proj\\\\",
                                     "C:/Users/Alice/x/../Proj"])
def test_windows_keys_fold_case_and_separators(written):
    assert cs.project_key(written, "win32") == "c:\\users\\alice\\proj"
    assert cs.find_project({written: {}, "C:/Users/Bob": {}}, "C:\\Users\\alice\\proj", "win32") == written


def test_an_exact_match_wins_over_a_case_folded_one():
    projects = {"C:/work/proj": {"n": 1}, "C:/work/Proj": {"n": 2}}
    assert cs.find_project(projects, "C:\\work\\Proj", "win32") == "C:/work/Proj"
    assert cs.find_project(projects, "C:\\WORK\\PROJ", "win32") in projects
    assert cs.normalise("C:/", "win32") == "C:\\"


def test_the_command_pre_approves_one_rule_per_server_sorted():
    assert cs.command_for(["b", "a", "b"]) == ["claude", "-p", "{message}", "--allowedTools", "mcp__a,mcp__b"]


def test_a_server_is_named_as_claude_code_names_it_in_tool_names():
    assert cs.tool_name("seren memory local") == "seren_memory_local"
    assert cs.tool_name("seren-memory") == "seren-memory" and cs.tool_name("a_b-9") == "a_b-9"
    assert cs.tool_name("my.server/v2") == "my_server_v2" and cs.tool_name("mémoire") == "m_moire"
    assert cs.tool_name("claude.ai  Google Drive ") == "claude_ai_Google_Drive"   # its connectors: squeezed
    assert cs.tool_name("x  y ") == "x__y_"                                       # others: not
    assert cs.command_for(["seren memory local", "seren-loci", "seren_memory_local"])[-1] == \
        "mcp__seren-loci,mcp__seren_memory_local"


def test_run_as_defaults_to_whoever_ran_the_command(monkeypatch):
    assert cs.invoking_account({"SUDO_USER": "alice"}) == "alice"
    assert cs.invoking_account({"SUDO_USER": "root"}) == cs.invoking_account({})
    assert cs.invoking_account({}) == cs._current_account()


def test_the_settings_file_is_the_flag_then_the_env_then_run_as_s_then_mine(tmp_path):
    env = {cs.ENV_CLAUDE_JSON: str(tmp_path / "env.json")}
    assert cs.settings_path(str(tmp_path / "flag.json"), environ=env) == tmp_path / "flag.json"
    assert cs.settings_path(None, environ=env) == tmp_path / "env.json"
    other = cs.settings_path(None, run_as="wren", environ={}, current="me", lookup_home=lambda u: f"/home/{u}")
    assert other == Path("/home/wren/.claude.json")
    assert cs.settings_path(None, run_as="ME", environ={}, current="me",
                            lookup_home=lambda u: "/nope") == Path(os.path.expanduser("~")) / ".claude.json"


# ---------------------------------------------------------------- the world the CLI sees

def _env(home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SEREN_HIPPOCAMPUS") and k not in (cs.ENV_CLAUDE_JSON, "SUDO_USER")}
    env["HOME"] = str(home)
    env.update(extra)
    return env


def _cli(tmp_path: Path, *args: str, home: Path = None, **extra: str) -> subprocess.CompletedProcess:
    if args[:1] == ("check-config",):       # the config alone: its Memory and model are not running here
        args = ("check-config", "--offline", *args[1:])
    return subprocess.run([sys.executable, "-m", "hippocampus", *args], capture_output=True, text=True,
                          encoding="utf-8", env=_env(home or tmp_path / "home", **extra), cwd=str(tmp_path),
                          timeout=60)


@pytest.fixture
def setup(tmp_path):
    """A HOME whose ~/.claude.json has a user-scope server and a local-scope entry for the folder written
    with a trailing slash, and the folder's own .mcp.json."""
    home, proj = tmp_path / "home", tmp_path / "work" / "proj"
    home.mkdir()
    proj.mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({
        "numStartups": 3,
        "mcpServers": {"seren-hippocampus": {"type": "http", "url": "http://127.0.0.1:7424/mcp/"}},
        "projects": {
            str(proj) + "/": {"mcpServers": {"seren-memory": {"type": "http", "url": "http://127.0.0.1:7420/mcp"}}},
            str(tmp_path / "work" / "elsewhere"): {"mcpServers": {"not-this-one": {}}},
        },
    }), encoding="utf-8")
    (proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"seren-loci": {"command": "seren-loci-mcp"}}}),
                                    encoding="utf-8")
    return tmp_path, home, proj


def _printed(stdout: str) -> dict:
    return json.loads(stdout.split("\n# config file:", 1)[0])


def _expected(proj: Path) -> list:
    return ["claude", "-p", "{message}", "--allowedTools", ",".join("mcp__" + s for s in THREE)]


def test_check_config_with_ripple_claude_shows_the_resolved_ripple_block(setup):
    tmp, home, proj = setup
    res = _cli(tmp, "check-config", "--ripple-claude", str(proj), home=home)
    assert res.returncode == 0, res.stdout + res.stderr
    rp = _printed(res.stdout)["ripple"]
    assert rp["type"] == "script"
    assert rp["command"] == _expected(proj)            # the three names, sorted, one --allowedTools argument
    assert rp["cwd"] == str(proj)
    assert rp["run_as"] == cs._current_account()
    assert "# overridden by flags: ripple.type, ripple.command, ripple.cwd, ripple.run_as" in res.stdout
    assert "user: seren-hippocampus; local: seren-memory; project: seren-loci" in res.stderr


def test_a_relative_folder_and_a_given_run_as_and_the_settings_from_the_flag_or_the_env(setup):
    tmp, home, proj = setup
    moved = tmp / "elsewhere.json"
    (home / ".claude.json").rename(moved)
    res = _cli(tmp, "check-config", "--ripple-run-as", "wren", "--ripple-claude", "work/proj",
               "--claude-json", str(moved), home=home)
    assert res.returncode == 0, res.stdout + res.stderr
    rp = _printed(res.stdout)["ripple"]
    assert rp["command"] == _expected(proj) and rp["cwd"] == str(proj) and rp["run_as"] == "wren"
    res = _cli(tmp, "check-config", "--ripple-claude", str(proj), home=home, SEREN_CLAUDE_JSON=str(moved))
    assert res.returncode == 0, res.stdout + res.stderr
    assert _printed(res.stdout)["ripple"]["command"] == _expected(proj)


def test_the_ripple_claude_yaml_loads_back_to_the_same_config(setup):
    tmp, home, proj = setup
    res = _cli(tmp, "ripple-claude", str(proj), "--yaml", "2", home=home)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("  command: [") and lines[1].startswith('  cwd: "')
    cfg_file = tmp / "h.yaml"
    cfg_file.write_text("ripple:\n  type: script\n" + res.stdout + '  run_as: "wren"\n', encoding="utf-8")
    loaded = cm.load(str(cfg_file), environ={}, announce=False)
    assert loaded.warnings == []
    flagged = _cli(tmp, "check-config", "--ripple-claude", str(proj), "--ripple-run-as", "wren", home=home)
    assert flagged.returncode == 0, flagged.stderr
    assert cm.redacted(loaded)["ripple"] == _printed(flagged.stdout)["ripple"]
    assert loaded.ripple.command == _expected(proj) and loaded.ripple.cwd == str(proj)
    # without --yaml: the whole block, ready for a config file
    block = _cli(tmp, "ripple-claude", str(proj), "--run-as", "wren", home=home)
    assert block.returncode == 0, block.stderr
    whole = tmp / "whole.yaml"
    whole.write_text(block.stdout, encoding="utf-8")
    again = cm.load(str(whole), environ={}, announce=False)
    assert again.warnings == [] and cm.redacted(again)["ripple"] == cm.redacted(loaded)["ripple"]


def test_no_such_folder_exits_2_saying_what_to_give(setup):
    tmp, home, proj = setup
    for args in (["check-config", "--ripple-claude", str(tmp / "nope")], ["ripple-claude", str(tmp / "nope")]):
        res = _cli(tmp, *args, home=home)
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"no such project folder: {tmp / 'nope'}" in res.stderr
        assert "the folder you run `claude` in" in res.stderr and "claude mcp add" in res.stderr


def test_no_claude_json_exits_2_saying_run_claude_in_the_folder_and_add_servers(setup):
    tmp, home, proj = setup
    (home / ".claude.json").unlink()
    for args in (["check-config", "--ripple-claude", str(proj)], ["ripple-claude", str(proj), "--yaml", "2"]):
        res = _cli(tmp, *args, home=home)
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"no Claude Code settings at {home / '.claude.json'}" in res.stderr
        assert f"run `claude` once in {proj}" in res.stderr
        assert f"`cd {proj} && claude mcp add <name> ...`" in res.stderr
        assert res.stdout == ""


def test_no_servers_exits_2_saying_claude_mcp_add_in_that_folder(setup):
    tmp, home, proj = setup
    (home / ".claude.json").write_text(json.dumps({"projects": {str(tmp / "other"): {"mcpServers": {"x": {}}}}}))
    (proj / ".mcp.json").unlink()
    res = _cli(tmp, "check-config", "--ripple-claude", str(proj), home=home)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"no MCP servers are registered for {proj}" in res.stderr
    assert f"Add them in that folder with `cd {proj} && claude mcp add <name> ...`" in res.stderr


@pytest.mark.parametrize("kind", ["endpoint", "off"])
def test_ripple_claude_with_another_ripple_type_is_refused_with_the_family_s_words(setup, kind):
    tmp, home, proj = setup
    res = _cli(tmp, "check-config", "--ripple", kind, "--ripple-url", "http://obs:7401/api/v1/system/ripple",
               "--ripple-claude", str(proj), home=home)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "wakes Claude Code on THIS box" in res.stderr
    assert ("for another box point --ripple endpoint at its Observatory or Lodestar and give that card "
            "--ripple-claude") in res.stderr
    ok = _cli(tmp, "check-config", "--ripple", "script", "--ripple-claude", str(proj), home=home)
    assert ok.returncode == 0, ok.stderr
    assert _printed(ok.stdout)["ripple"]["type"] == "script"


def test_the_flags_are_in_help_and_claude_json_alone_is_refused(setup):
    tmp, home, proj = setup
    helped = _cli(tmp, "--help", home=home)
    words = " ".join(helped.stdout.split())
    assert "--ripple-claude DIR" in words and "--claude-json PATH" in words
    assert "check-ripple" in words and "ripple-claude" in words
    assert "--ripple-claude DIR" in " ".join(_cli(tmp, "check-config", "--help", home=home).stdout.split())
    res = _cli(tmp, "check-config", "--claude-json", str(home / ".claude.json"), home=home)
    assert res.returncode == 2 and "--claude-json only matters with --ripple-claude" in res.stderr


def test_an_unreadable_claude_json_exits_2_naming_it(setup):
    tmp, home, proj = setup
    (home / ".claude.json").write_text("{ not json", encoding="utf-8")
    res = _cli(tmp, "ripple-claude", str(proj), home=home)
    assert res.returncode == 2 and "is not valid JSON" in res.stderr and str(home / ".claude.json") in res.stderr
