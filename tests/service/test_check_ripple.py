"""check-ripple and the wakeup on /status (issue 23), against a stand-in `claude` on PATH.

The stand-in is a real executable script in tmp_path: it records each run (argv, cwd, the ripple event),
prints two lines and exits with the code it is told. check-ripple runs as a real subprocess
(`python -m hippocampus check-ripple ...`); the /status part runs the whole service in-process.
"""
from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from hippocampus.ripple import claude as claude_setup
from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

pytestmark = pytest.mark.skipif(os.name == "nt", reason="a POSIX stand-in script and PATH")

STAND_IN = '''#!{python}
import json, os, sys
with open({runs!r}, "a", encoding="utf-8") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(),
                        "event": os.environ.get("SEREN_RIPPLE_EVENT")}}) + "\\n")
print("stand-in claude: OK")
print("nothing to do")
sys.exit(int(open({code!r}).read()) if os.path.exists({code!r}) else 0)
'''


class Box:
    """A HOME with Claude Code's settings for a project folder, and a stand-in claude on a PATH."""

    def __init__(self, tmp_path: Path, memory_url: str):
        self.tmp, self.memory_url = tmp_path, memory_url
        self.home, self.proj, self.bin = tmp_path / "home", tmp_path / "proj", tmp_path / "bin"
        for d in (self.home, self.proj, self.bin):
            d.mkdir()
        self.runs_file, self.code_file = tmp_path / "runs.jsonl", tmp_path / "exit_code"
        self.claude = self.bin / "claude"
        self.claude.write_text(STAND_IN.format(python=sys.executable, runs=str(self.runs_file),
                                               code=str(self.code_file)), encoding="utf-8")
        self.claude.chmod(0o755)
        self.settings = self.home / ".claude.json"
        self.register(local={"seren-memory": {"type": "http", "url": memory_url + "/mcp"}})   # the real Memory
        (self.proj / ".mcp.json").write_text(json.dumps({"mcpServers": {"seren-loci": {"command": "loci-mcp"}}}))

    def register(self, local: dict) -> None:
        self.settings.write_text(json.dumps({
            "mcpServers": {"seren-hippocampus": {"type": "http", "url": "http://127.0.0.1:7424/mcp/"}},
            "projects": {str(self.proj) + "/": {"mcpServers": local}}}), encoding="utf-8")

    def exits(self, code: int) -> None:
        self.code_file.write_text(str(code))

    def runs(self) -> list:
        if not self.runs_file.exists():
            return []
        return [json.loads(ln) for ln in self.runs_file.read_text(encoding="utf-8").splitlines() if ln.strip()]

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SEREN_HIPPOCAMPUS") and k not in (claude_setup.ENV_CLAUDE_JSON, "SUDO_USER")}
        env["HOME"] = str(self.home)
        env["PATH"] = str(self.bin) + os.pathsep + env.get("PATH", "")
        return env

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hippocampus", *args], capture_output=True, text=True,
                              encoding="utf-8", env=self.env(), cwd=str(self.tmp), timeout=120)

    def config(self) -> Path:
        """The config file a user would write: the block `ripple-claude DIR` prints, and a state folder."""
        block = self.cli("ripple-claude", str(self.proj))
        assert block.returncode == 0, block.stderr
        path = self.tmp / "h.yaml"
        path.write_text(block.stdout + f"sleep:\n  state_path: {json.dumps(str(self.tmp / 'state' / 'state.json'))}\n",
                        encoding="utf-8")
        return path


@pytest.fixture
def box(tmp_path, memory_server) -> Box:
    return Box(tmp_path, memory_server.url)


def lines_of(stdout: str) -> dict:
    """check name -> its line, for the ok/FAIL lines."""
    out = {}
    for ln in stdout.splitlines():
        if ln.startswith(("ok    ", "FAIL  ")):
            name = ln[6:].split(":", 1)[0]
            out[name] = ln
    return out


def test_a_wired_box_is_all_ok_one_line_per_precondition(box):
    res = box.cli("check-ripple", "--config", str(box.config()))
    assert res.returncode == 0, res.stdout + res.stderr
    got = lines_of(res.stdout)
    assert list(got) == ["run_as", "command", "message", "cwd", "servers", "memory"], res.stdout
    assert all(ln.startswith("ok") for ln in got.values()), res.stdout
    assert f"'claude' is {box.claude}" in got["command"]
    assert f"{box.proj} exists" in got["cwd"]
    assert "seren-hippocampus, seren-loci, seren-memory pre-approved and registered" in got["servers"]
    assert f"seren-memory answers at {box.memory_url}/health as Seren Memory" in got["memory"]
    assert "# all 6 ok" in res.stdout
    assert box.runs() == []                      # without --fire nothing is started


def test_with_the_stand_in_removed_the_path_line_names_it(box):
    cfg = box.config()
    box.claude.unlink()
    res = box.cli("check-ripple", "--config", str(cfg))
    assert res.returncode == 1, res.stdout + res.stderr
    line = lines_of(res.stdout)["command"]
    assert line.startswith("FAIL") and "'claude' is not on" in line and "PATH" in line
    assert "install Claude Code" in line
    assert "# 1 of 6 not ok" in res.stdout


def test_a_server_missing_from_the_folder_s_registration_is_named(box):
    cfg = box.config()
    (box.proj / ".mcp.json").unlink()             # seren-loci was registered only there
    res = box.cli("check-ripple", "--config", str(cfg))
    assert res.returncode == 1, res.stdout + res.stderr
    got = lines_of(res.stdout)
    assert got["servers"].startswith("FAIL  servers: seren-loci is pre-approved in --allowedTools but not "
                                     f"registered for {box.proj}")
    assert "claude mcp add seren-loci" in got["servers"]
    assert got["memory"].startswith("ok")          # the memory server is still there
    box.register(local={})                         # and now Memory is gone too
    got = lines_of(box.cli("check-ripple", "--config", str(cfg)).stdout)
    assert "seren-loci, seren-memory are pre-approved" in got["servers"]
    assert got["memory"].startswith("FAIL") and "Seren Memory server" in got["memory"]


# ---------------------------------------------------------------- issue 32, item 4

def test_a_server_name_with_a_space_is_pre_approved_by_claude_code_s_name_for_it(box):
    """A hand-edited ~/.claude.json with "seren memory local": Claude Code names its tools
    mcp__seren_memory_local__*, so that is the rule the command carries, and the check reads it back."""
    box.register(local={"seren memory local": {"type": "http", "url": box.memory_url + "/mcp"}})
    block = box.cli("ripple-claude", str(box.proj))
    assert block.returncode == 0, block.stderr
    assert "mcp__seren-hippocampus,mcp__seren-loci,mcp__seren_memory_local" in block.stdout, block.stdout
    assert "seren memory" not in block.stdout.split("command:", 1)[1].split("\n", 1)[0]
    res = box.cli("check-ripple", "--config", str(box.config()))
    assert res.returncode == 0, res.stdout + res.stderr
    got = lines_of(res.stdout)
    assert "seren_memory_local (registered as 'seren memory local')" in got["servers"], got["servers"]
    assert got["memory"].startswith("ok") and "seren_memory_local" in got["memory"], got["memory"]


def test_the_old_command_with_the_space_fails_and_the_fix_it_names_works(box):
    """The command an older ripple-claude wrote (`mcp__seren memory local`) pre-approves nothing Claude Code
    has: the check says so and why, and the command it tells you to run writes one that passes."""
    box.register(local={"seren memory local": {"type": "http", "url": box.memory_url + "/mcp"}})
    old = ["claude", "-p", "{message}", "--allowedTools",
           "mcp__seren memory local,mcp__seren-hippocampus,mcp__seren-loci"]
    cfg = box.tmp / "old.yaml"
    cfg.write_text(f"ripple:\n  type: script\n  command: {json.dumps(old)}\n  cwd: {json.dumps(str(box.proj))}\n"
                   f"  run_as: {json.dumps(getpass.getuser())}\n", encoding="utf-8")
    res = box.cli("check-ripple", "--config", str(cfg))
    assert res.returncode == 1, res.stdout + res.stderr
    servers = lines_of(res.stdout)["servers"]
    assert servers.startswith("FAIL") and "'seren memory local' is named seren_memory_local in Claude Code's " \
        "tool names, so its rule is mcp__seren_memory_local" in servers, servers
    fix = f"seren-hippocampus ripple-claude {box.proj}"
    assert fix in servers
    res = box.cli("check-ripple", "--config", str(box.config()))       # the block that command prints
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_memory_check_asks_the_server_and_this_service_is_not_memory(box, make_config, start_service):
    """A server named seren-memory whose URL is this service (seren-hippocampus) fails the memory check,
    as does one whose URL nothing answers; one started by a seren-memory command passes."""
    svc = start_service(make_config())
    box.register(local={"seren-memory": {"type": "http", "url": svc.url + "/mcp/"}})
    res = box.cli("check-ripple", "--config", str(box.config()))
    assert res.returncode == 1, res.stdout + res.stderr
    memory = lines_of(res.stdout)["memory"]
    assert memory.startswith("FAIL") and f"seren-memory points at {svc.url}/mcp/, which answers as a " \
        "seren-hippocampus" in memory, memory
    assert "seren-hippocampus points at http://127.0.0.1:7424/mcp/" in memory    # the user-scope one, asked too
    assert "claude mcp add --transport http seren-memory" in memory

    nobody = free_port()
    box.register(local={"seren-memory": {"type": "http", "url": f"http://127.0.0.1:{nobody}/mcp"}})
    memory = lines_of(box.cli("check-ripple", "--config", str(box.config())).stdout)["memory"]
    assert memory.startswith("FAIL") and f"127.0.0.1:{nobody}/mcp, which does not answer" in memory, memory

    box.register(local={"memory": {"command": "uvx", "args": ["--from", "seren-memory[mcp]", "seren-memory-mcp"]},
                        "notes": {"command": "notes-mcp"}})
    memory = lines_of(box.cli("check-ripple", "--config", str(box.config())).stdout)["memory"]
    assert memory.startswith("ok") and "memory is started by `uvx --from seren-memory[mcp] seren-memory-mcp`" \
        in memory, memory


def test_fire_makes_the_state_folder_private(box):
    cfg = box.config()
    state = box.tmp / "state"
    assert not state.exists()
    res = box.cli("check-ripple", "--config", str(cfg), "--fire")
    assert res.returncode == 0, res.stdout + res.stderr
    assert oct(state.stat().st_mode & 0o777) == oct(0o700)
    assert oct((state / "ripple.log").stat().st_mode & 0o777) == oct(0o600)


def test_fire_runs_the_stand_in_once_through_the_ripple_and_reports_its_exit_code(box):
    cfg = box.config()
    box.exits(3)
    res = box.cli("check-ripple", "--config", str(cfg), "--fire")
    assert res.returncode == 1, res.stdout + res.stderr
    fire = lines_of(res.stdout)["fire"]
    assert fire.startswith("FAIL  fire: pid ") and " exited 3 after " in fire, res.stdout
    assert "stand-in claude: OK" in res.stdout and "nothing to do" in res.stdout   # the first lines of output
    runs = box.runs()
    assert len(runs) == 1, runs
    run = runs[0]
    assert run["cwd"] == str(box.proj) and run["event"] == "wake_check"
    assert run["argv"][0] == "-p" and "reply OK; nothing to do" in run["argv"][1]
    assert run["argv"][2:] == ["--allowedTools", "mcp__seren-hippocampus,mcp__seren-loci,mcp__seren-memory"]
    assert "stand-in claude: OK" in (box.tmp / "state" / "ripple.log").read_text()   # the real route's log

    box.exits(0)
    res = box.cli("check-ripple", "--config", str(cfg), "--fire")
    assert res.returncode == 0, res.stdout + res.stderr
    assert " exited 0 after " in lines_of(res.stdout)["fire"] and len(box.runs()) == 2


def test_status_shows_the_wakeup_and_the_last_ripple_per_event_computed_off_the_request(
        box, make_config, start_service, monkeypatch):
    monkeypatch.setenv("PATH", box.env()["PATH"])
    monkeypatch.setenv(claude_setup.ENV_CLAUDE_JSON, str(box.settings))
    cr = claude_setup.build(str(box.proj))
    box.exits(5)
    cfg = make_config(ripple={"type": "script", "command": cr.command, "cwd": cr.cwd, "run_as": getpass.getuser(),
                              "events": ["draft_submitted"]})
    svc = start_service(cfg)

    def status() -> dict:
        return requests.get(svc.url + "/status", timeout=10).json()
    wake = wait_for(lambda: (lambda w: w if w.get("ok") is not None else None)(status()["wakeup"]), timeout=10,
                    what="the start-up wake-up check")
    assert wake["ok"] is True, wake
    assert wake["summary"].startswith(f"ok: claude as {getpass.getuser()} in {box.proj}")
    assert [ln["check"] for ln in wake["lines"]] == ["run_as", "command", "message", "cwd", "servers", "memory"]
    assert wake["last"] == {}
    time.sleep(0.2)
    assert status()["wakeup"]["checked_at"] == wake["checked_at"]     # /status reads it; it never re-checks

    svc.runtime.ctx.emit("draft_submitted", draft_id="d-wake", operations=1)
    last = wait_for(lambda: (lambda w: w["last"].get("draft_submitted") if "exit_code" in
                             w["last"].get("draft_submitted", {}) else None)(status()["wakeup"]),
                    timeout=15, what="the ripple's exit code on /status")
    assert last["exit_code"] == 5 and last["ok"] is False and last["type"] == "script"
    assert len(box.runs()) == 1 and box.runs()[0]["event"] == "draft_submitted"

    box.claude.unlink()                            # the next ripple fails, and the check after it says why
    svc.runtime.ctx.emit("draft_submitted", draft_id="d-gone", operations=1)
    st = wait_for(lambda: (lambda s: s if s["wakeup"].get("ok") is False and "exit_code" not in
                           s["wakeup"]["last"].get("draft_submitted", {}) else None)(status()), timeout=15,
                  what="the wake-up check after the ripple, and the ripple's outcome")
    assert st["wakeup"]["summary"].startswith("would fail: command: 'claude' is not on"), st["wakeup"]
    failed = st["wakeup"]["last"]["draft_submitted"]
    assert failed["ok"] is False and "claude" in failed["error"] and "exit_code" not in failed
    assert "a wake-up of the main model would fail: command:" in st["explain"].lower()

    page = requests.get(svc.url + "/viewer", timeout=10).text
    assert 'id="wakeupLine"' in page and "Wake-up: " in page and "say.wakeup" in page


@pytest.mark.parametrize("given", ["-5", "0", "nan", "inf"])
def test_fire_s_timeout_must_be_seconds_above_0(tmp_path, given):
    """`check-ripple --fire --timeout -5` killed a command that works at once and blamed it ("did not finish
    within -5 s and was killed"); a timeout that is no wait at all is refused, as replay refuses it."""
    runs = tmp_path / "runs.jsonl"
    cmd = f"{sys.executable} -c \"open({str(runs)!r}, 'a').write('ran')\" {{message}}"
    r = subprocess.run([sys.executable, "-m", "hippocampus", "check-ripple", "--ripple", "script", "--ripple-command",
                        cmd, "--ripple-run-as", getpass.getuser(), "--fire", "--timeout", given,
                        "--config", str(tmp_path / "none.yaml")],
                       capture_output=True, text=True, cwd=str(tmp_path), timeout=60,
                       env={**os.environ, "HOME": str(tmp_path)})
    assert r.returncode == 2 and "--timeout" in r.stderr and "killed" not in r.stdout, r.stdout + r.stderr
    assert not runs.exists()
