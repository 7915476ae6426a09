"""The wake-up checks (issue 23) as plain functions over a made-up world (a Probe): which line says what."""
from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hippocampus.ripple import check as rc
from hippocampus.ripple import claude_checks, probe
from hippocampus.ripple.claude import bare
from hippocampus.config import RippleConfig
from hippocampus.ripple.fire import Ripple


def _world(tmp_path: Path, **kw) -> rc.Probe:
    base = dict(whoami=lambda: ("alice", False), environ={"PATH": str(tmp_path / "bin")}, platform="linux",
                cwd=lambda: str(tmp_path), home_of=lambda u: str(tmp_path / "homes" / bare(u)),
                account_exists=lambda u: bare(u) in ("alice", "wren"), logged_on=lambda u: None,
                sudo_allows=lambda u, exe: True, http_get=lambda url, h, t: 405)
    base.update(kw)
    return rc.Probe(**base)


def _claude(tmp_path: Path) -> Path:
    b = tmp_path / "bin"
    b.mkdir(exist_ok=True)
    exe = b / "claude"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return exe


def _settings(tmp_path: Path, folder: Path, local: dict, user: dict = None) -> dict:
    path = tmp_path / "claude.json"
    path.write_text(json.dumps({"mcpServers": user or {}, "projects": {str(folder): {"mcpServers": local}}}))
    return {"SEREN_CLAUDE_JSON": str(path), "PATH": str(tmp_path / "bin")}


def _by(lines: list) -> dict:
    return {ln.check: ln for ln in lines}


def test_the_allowed_tools_servers_are_read_from_every_spelling():
    assert claude_checks.allowed_servers(["claude", "-p", "x", "--allowedTools", "mcp__a,mcp__b__submit_brief mcp__c"]) == \
        ["a", "b", "c"]
    assert claude_checks.allowed_servers(["claude", "--allowed-tools=mcp__a,Bash", "--allowedTools", "mcp__d"]) == ["a", "d"]
    assert claude_checks.allowed_servers(["claude", "-p", "{message}"]) is None
    assert claude_checks.is_claude(["/usr/local/bin/claude"]) and claude_checks.is_claude(["C:\\npm\\claude.cmd"])
    assert not claude_checks.is_claude(["python", "claude"])


def test_a_memory_server_is_known_by_what_its_url_answers_or_its_command_never_by_its_name(tmp_path):
    memory = {"ok": True, "ts": 1796141841.4, "features": ["target_op"]}
    asked = []

    def answers(body):
        return _world(tmp_path, http_json=lambda url, t: (asked.append(url), (200, body))[1])

    ok, said = claude_checks.what_it_is({"url": "http://box:7420/mcp"}, answers(memory))
    assert ok and said == "answers at http://box:7420/health as Seren Memory" and asked == ["http://box:7420/health"]
    old = {"ok": True, "ts": 1700000000}                            # a build before `features`
    assert claude_checks.what_it_is({"type": "sse", "url": "http://box/memory/sse"}, answers(old))[0]
    assert asked[-1] == "http://box/memory/health"
    ok, said = claude_checks.what_it_is({"url": "http://127.0.0.1:7424/mcp/"},
                                        answers({"ok": True, "memory_reachable": True}))
    assert not ok and "answers as a seren-hippocampus" in said
    assert not claude_checks.what_it_is({"url": "http://box/mcp"}, answers({"ok": True}))[0]
    assert not claude_checks.what_it_is({}, answers(memory))[0]     # a name alone ("seren-memory") says nothing
    assert claude_checks.what_it_is({"command": "uvx", "args": ["seren-memory", "mcp"]}, answers(None))[0]
    assert claude_checks.what_it_is({"command": "/opt/seren_memory/bin/mcp"}, answers(None))[0]
    assert not claude_checks.what_it_is({"command": "seren-hippocampus"}, answers(None))[0]
    assert claude_checks.health_urls("http://u:p@h:1/a/mcp/?k=v") == ["http://u:p@h:1/a/health", "http://u:p@h:1/health"]


def test_a_wired_claude_ripple_is_all_ok(tmp_path):
    exe = _claude(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    env = _settings(tmp_path, proj, {"seren-memory": {"command": "seren-memory-mcp"}}, {"seren-loci": {}})
    cfg = RippleConfig(type="script", command=["claude", "-p", "{message}", "--allowedTools",
                                               "mcp__seren-loci,mcp__seren-memory"], cwd=str(proj), run_as="alice")
    lines = rc.checks(cfg, probe=_world(tmp_path, environ=env))
    assert [ln.check for ln in lines] == ["run_as", "command", "message", "cwd", "servers", "memory"]
    assert all(ln.ok for ln in lines), [ln.render() for ln in lines]
    assert str(exe) in _by(lines)["command"].text
    view = rc.wakeup_view(cfg, lines)
    assert view["ok"] is True and view["summary"].startswith(f"ok: claude as alice in {proj}")


def test_each_broken_precondition_names_itself_and_the_fix(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    env = _settings(tmp_path, proj, {"seren-loci": {}})
    cfg = RippleConfig(type="script", command=["claude", "-p", "{message}", "--allowedTools",
                                               "mcp__seren-loci,mcp__seren-margin"], cwd=str(proj), run_as="alice")
    by = _by(rc.checks(cfg, probe=_world(tmp_path, environ=env)))
    assert not by["command"].ok and "'claude' is not on alice's PATH" in by["command"].text
    assert "npm install -g @anthropic-ai/claude-code" in by["command"].text
    assert not by["servers"].ok and by["servers"].text.startswith("seren-margin is pre-approved")
    assert f"cd {proj} && claude mcp add seren-margin" in by["servers"].text
    assert not by["memory"].ok and "claude mcp add --transport http seren-memory" in by["memory"].text
    gone = RippleConfig(type="script", command=["claude", "-p"], cwd=str(tmp_path / "gone"))
    by = _by(rc.checks(gone, probe=_world(tmp_path, environ=env)))
    assert not by["cwd"].ok and "does not exist" in by["cwd"].text
    assert not by["message"].ok and "add {message}" in by["message"].text
    assert not by["servers"].ok and "no --allowedTools" in by["servers"].text


def test_the_account_lines(tmp_path):
    _claude(tmp_path)
    cmd = ["claude", "-p", "{message}"]
    root = _world(tmp_path, whoami=lambda: ("root", True))
    by = _by(rc.checks(RippleConfig(type="script", command=cmd), probe=root))
    assert not by["run_as"].ok and "run_as is empty" in by["run_as"].text
    by = _by(rc.checks(RippleConfig(type="script", command=cmd, run_as="nobody-here"), probe=root))
    assert not by["run_as"].ok and "no such user on this box: nobody-here" in by["run_as"].text
    home_bin = tmp_path / "homes" / "wren" / ".local" / "bin"
    home_bin.mkdir(parents=True)
    (home_bin / "claude").write_text("#!/bin/sh\n")
    (home_bin / "claude").chmod(0o755)
    by = _by(rc.checks(RippleConfig(type="script", command=cmd, run_as="wren"), probe=root))
    assert by["run_as"].ok and "runuser" in by["run_as"].text
    assert by["command"].ok and str(home_bin / "claude") in by["command"].text
    by = _by(rc.checks(RippleConfig(type="script", command=cmd, run_as="wren"),
                       probe=_world(tmp_path, sudo_allows=lambda u, exe: False)))
    assert not by["sudo"].ok and "sudoers rule" in by["sudo"].text


def test_a_localsystem_service_needs_the_person_logged_on_windows_semantics(tmp_path):
    system = dict(whoami=lambda: ("SYSTEM", True), platform="win32", environ={"PATH": ""})
    cfg = RippleConfig(type="script", command=["claude", "-p", "{message}"], run_as=".\\Wren")
    by = _by(rc.checks(cfg, probe=_world(tmp_path, logged_on=lambda u: False, **system)))
    assert not by["run_as"].ok and "is not logged on to this box" in by["run_as"].text
    assert by["command"].ok and "--fire tries it" in by["command"].text
    by = _by(rc.checks(cfg, probe=_world(tmp_path, logged_on=lambda u: True, **system)))
    assert by["run_as"].ok and "logged on" in by["run_as"].text
    stdin = RippleConfig(type="script", command=["claude", "-p"], run_as="wren", stdin=True)
    by = _by(rc.checks(stdin, probe=_world(tmp_path, logged_on=lambda u: True, **system)))
    assert not by["message"].ok and "put {message} in the command" in by["message"].text
    assert probe.windows_logged_on("anyone") is None if os.name != "nt" else True


def test_an_endpoint_answers_or_says_why_not(tmp_path):
    cfg = RippleConfig(type="endpoint", url="http://obs:7401/api/v1/system/ripple")
    assert _by(rc.checks(cfg, probe=_world(tmp_path)))["url"].ok
    for answer, says in ((404, "no ripple route"), (401, "wants a bearer"), (503, "up but failing")):
        line = _by(rc.checks(cfg, probe=_world(tmp_path, http_get=lambda u, h, t, a=answer: a)))["url"]
        assert not line.ok and says in line.text

    def refused(url, headers, timeout):
        raise ConnectionError("connection refused")
    line = _by(rc.checks(cfg, probe=_world(tmp_path, http_get=refused)))["url"]
    assert not line.ok and "does not answer" in line.text
    assert not _by(rc.checks(RippleConfig(type="endpoint"), probe=_world(tmp_path)))["url"].ok


def test_off_is_one_line_and_the_status_view_is_neither_ok_nor_broken(tmp_path):
    lines = rc.checks(RippleConfig(type=""), probe=_world(tmp_path))
    assert len(lines) == 1 and not lines[0].ok and "--ripple-claude DIR" in lines[0].text
    view = rc.wakeup_view(RippleConfig(type=""), lines)
    assert view["ok"] is None and view["summary"].startswith("off")
    bad = rc.wakeup_view(RippleConfig(type="script"), [rc.Line("a", True, "x"), rc.Line("cwd", False, "gone"),
                                                       rc.Line("memory", False, "none")])
    assert bad["ok"] is False and bad["summary"] == "would fail: cwd: gone (and 1 more: memory)"


def test_the_ripple_keeps_the_last_result_per_event_with_its_exit_code(tmp_path):
    me = getpass.getuser()
    cfg = RippleConfig(type="script", command=[sys.executable, "-c", "import sys; sys.exit(4)", "{message}"],
                       run_as=me)
    r = Ripple(cfg, log_dir=tmp_path, whoami=lambda: (me, False))
    ended = []
    r.on_exit = ended.append
    out = r.fire({"type": "draft_submitted", "draft_id": "d1"})
    assert out["ok"] is True
    done = r.wait("draft_submitted", 10)
    assert done["exit_code"] == 4 and done["ok"] is False and done["running"] is False
    assert done["pid"] == out["pid"] and done["error"] == "exited 4"
    assert r.last_results()["draft_submitted"]["exit_code"] == 4
    assert ended == ["draft_submitted"]
    missing = Ripple(RippleConfig(type="script", command=["no-such-program-here"], run_as=me), log_dir=tmp_path,
                     whoami=lambda: (me, False))
    missing.fire({"type": "brief_requested"})
    assert missing.last_results()["brief_requested"]["ok"] is False
    assert "no-such-program-here" in missing.last_results()["brief_requested"]["error"]


def test_a_child_that_ends_before_fire_returns_still_gets_its_exit_code(tmp_path, monkeypatch):
    """The reaper may see the child end before fire() has returned: the result it records must stick."""
    import types

    import hippocampus.ripple.fire as ripple_mod

    me = getpass.getuser()
    r = Ripple(RippleConfig(type="script", command=[sys.executable, "-c", "import sys; sys.exit(2)"], run_as=me),
               log_dir=tmp_path, whoami=lambda: (me, False))

    class AtOnce:                      # the reaper runs to the end inside fire(), before it returns
        def __init__(self, target, args=(), **kw):
            self.target, self.args = target, args

        def start(self):
            self.target(*self.args)
    monkeypatch.setattr(ripple_mod, "threading", types.SimpleNamespace(Thread=AtOnce))
    out = r.fire({"type": "brief_requested"})
    assert out["ok"] is True
    last = r.last_results()["brief_requested"]
    assert last["running"] is False and last["exit_code"] == 2 and last["pid"] == out["pid"]


@pytest.mark.parametrize("config_seconds,given,runs,said", [
    (0.5, 30.0, 2.0, "exited 0 after"),             # --timeout longer than ripple.timeout_seconds: it waits that long
    (0.5, None, 30.0, "did not finish within 0.5 s and was killed"),    # killed at its own timeout: said so
])
def test_fire_waits_as_long_as_it_says_and_says_a_kill(tmp_path, config_seconds, given, runs, said):
    """check-ripple --fire --timeout N waits N s for the command (its help says so), and a command killed for
    its time is said to be, not "exited -9"."""
    me = getpass.getuser()
    cfg = RippleConfig(type="script", command=[sys.executable, "-c", f"import time; time.sleep({runs})", "{message}"],
                       run_as=me, timeout_seconds=config_seconds)
    line = rc.fire(cfg, log_dir=tmp_path, timeout=given)
    assert said in line.text, line.text
    assert line.ok is (said.startswith("exited 0")), line.text


def test_under_no_new_privs_the_sudo_line_names_the_unit_s_hardening_not_a_sudoers_rule(tmp_path):
    """Found: under the systemd unit (NoNewPrivileges=true) sudo cannot gain privileges at all, so a ripple run_as
    another account fails every time, and the check told the operator to add a sudoers rule, which changes nothing."""
    b = tmp_path / "homes" / "wren" / "bin"
    b.mkdir(parents=True)
    (b / "wake").write_text("#!/bin/sh\n")
    (b / "wake").chmod(0o755)
    cfg = RippleConfig(type="script", command=[str(b / "wake"), "{message}"], run_as="wren")
    by = _by(rc.checks(cfg, probe=_world(tmp_path, sudo_allows=lambda u, exe: False, no_new_privs=lambda: True)))
    assert not by["sudo"].ok and "NoNewPrivileges=true" in by["sudo"].text and "sudoers" not in by["sudo"].text
    assert "leave ripple.run_as empty" in by["sudo"].text


@pytest.mark.skipif(not shutil.which("setpriv") or not Path("/proc/self/status").exists(), reason="no setpriv here")
def test_the_no_new_privs_flag_is_read_from_the_process():
    if "NoNewPrivs:\t1" in Path("/proc/self/status").read_text():
        pytest.skip("this process already runs with no_new_privs: nothing to tell apart")
    code = "from hippocampus.ripple.probe import _no_new_privs; print(_no_new_privs())"
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    held = subprocess.run(["setpriv", "--no-new-privs", sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert (plain, held) == ("False", "True")
