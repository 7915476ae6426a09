"""Deployment (issue 11): the service host the Windows service runs, the systemd unit, the Jetson
profile, the installer card's flags, and the demo."""
from __future__ import annotations

import configparser
import getpass
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNIT = DEPLOY / "systemd" / "seren-hippocampus.service"
JETSON = DEPLOY / "jetson" / "seren-hippocampus.jetson.yaml"
CARD_4GB = DEPLOY / "windows" / "4gb-card.md"


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _yaml(path: Path, data: dict) -> Path:
    from ruamel.yaml import YAML

    with path.open("w", encoding="utf-8") as fh:
        YAML().dump(data, fh)
    return path


def _cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hippocampus", *args], capture_output=True, text=True,
                          env=_env(), cwd=str(cwd), timeout=timeout)


# ---------------------------------------------------------------- the service host

def _leftovers() -> list:
    return [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]


def fake_home(tmp_path) -> Path:
    """A home as the unit expects it: the yaml, and the venv's python (this one)."""
    home = tmp_path / "home"
    (home / "seren-hippocampus").mkdir(parents=True)
    (home / "seren-hippocampus" / "seren-hippocampus.yaml").write_text("{}\n")
    (home / "seren-venvs" / "hippocampus" / "bin").mkdir(parents=True)
    (home / "seren-venvs" / "hippocampus" / "bin" / "python").symlink_to(sys.executable)
    return home


def test_the_host_serves_and_stops_within_the_hint_answering_the_request_in_flight(tmp_path, memory, hand,
                                                                                   fake_model):
    import pykka

    from hippocampus.service.host import ServiceHost

    for i in range(3):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
    hand.brief("tea mattered this week")
    fake_model.replies = [{"content": '{"operations": []}', "delay": 1.5}]
    port = free_port()
    (tmp_path / "app").mkdir()
    cfg = _yaml(tmp_path / "app" / "seren-hippocampus.yaml", {
        "server": {"host": "127.0.0.1", "port": port},
        "memory": {"url": memory.url},
        "model": {"url": fake_model.url},
        "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json")},
    })
    host = ServiceHost(str(cfg), None).start()
    try:
        base = f"http://127.0.0.1:{port}"
        assert host.url == base
        r = requests.get(base + "/health", timeout=10)
        assert r.status_code == 200 and r.json()["ok"] is True
        answer: dict = {}

        def slow_check() -> None:
            try:
                answer["resp"] = requests.post(base + "/check", timeout=60)
            except requests.RequestException as exc:  # pragma: no cover - reported below
                answer["error"] = exc
        t = threading.Thread(target=slow_check, daemon=True)
        t.start()
        wait_for(lambda: fake_model.in_flight, timeout=20, what="the slow model call to start")
        took = host.stop(wait_hint_seconds=15)
    finally:
        host.stop(wait_hint_seconds=15)               # idempotent: 0.0 the second time
    t.join(20)
    assert took < 5, took                             # the model call in flight is abandoned, not waited out
    assert "error" not in answer, answer.get("error")
    assert answer["resp"].status_code == 503, answer["resp"].text      # answered, saying why
    assert "the service is stopping" in answer["resp"].json()["detail"]
    with pytest.raises(requests.ConnectionError):
        requests.get(base + "/health", timeout=2)
    assert pykka.ActorRegistry.get_all() == []
    assert not _leftovers(), _leftovers()
    log_file = tmp_path / "app" / "logs" / "seren-hippocampus.log"      # under the service's folder
    text = log_file.read_text(encoding="utf-8")
    assert "starting as a service" in text and "stopped in" in text
    assert host.wait(0) is True


def test_the_host_takes_a_log_dir_and_refuses_a_relative_or_missing_config(tmp_path, memory):
    from hippocampus.service.host import ServiceHost

    for rel in ("seren-hippocampus.yaml", "conf/seren-hippocampus.yaml", "~/seren-hippocampus.yaml", ""):
        with pytest.raises(ValueError, match="absolute"):
            ServiceHost(rel, None).start()
    with pytest.raises(FileNotFoundError):
        ServiceHost(str(tmp_path / "nope.yaml"), None).start()
    cfg = _yaml(tmp_path / "h.yaml", {"server": {"port": free_port()}, "memory": {"url": memory.url},
                                      "model": {"url": ""},
                                      "sleep": {"mode": "external", "state_path": str(tmp_path / "s" / "st.json")}})
    host = ServiceHost(str(cfg), tmp_path / "elsewhere").start()
    try:
        assert requests.get(host.url + "/health", timeout=10).status_code == 200
    finally:
        took = host.stop(5)
    assert took < 5
    assert (tmp_path / "elsewhere" / "seren-hippocampus.log").exists()
    assert not _leftovers()


def test_the_windows_shim_imports_here_and_the_service_command_points_to_systemd(tmp_path):
    from hippocampus.service import winservice

    assert winservice.available() is False and winservice.SerenHippocampusService is None
    res = _cli("service", "install", "--config", str(tmp_path / "h.yaml"), cwd=tmp_path)
    assert res.returncode == 2
    assert "Windows" in res.stderr and "deploy/systemd" in res.stderr


# ---------------------------------------------------------------- systemd

class _Multi(dict):
    """configparser keeps only the last of a repeated key; this keeps them all (Environment=...)."""

    def __setitem__(self, key, value):
        if key in self and isinstance(value, list) and isinstance(self[key], list):
            self[key].extend(value)
        else:
            super().__setitem__(key, value)


def test_the_systemd_unit_parses_with_the_keys_and_verifies(tmp_path):
    cp = configparser.ConfigParser(strict=False, interpolation=None, dict_type=_Multi)
    cp.optionxform = str
    cp.read(UNIT, encoding="utf-8")
    svc = cp["Service"]
    assert svc["Restart"] == "on-failure"
    assert svc["Type"] == "notify" and svc["NotifyAccess"] == "main" and int(svc["WatchdogSec"]) >= 10
    assert svc["EnvironmentFile"].lstrip("-").endswith("seren-hippocampus.env")
    assert "PYTHONUTF8=1" in svc["Environment"].split("\n")
    user = svc["User"].strip()
    assert user and user not in ("root", "0")
    exec_start = shlex.split(svc["ExecStart"])
    assert exec_start[0].endswith("/bin/python") and exec_start[1:3] == ["-m", "seren_hippocampus"]
    assert exec_start[3] == "--config" and exec_start[4].startswith("__TARGET_HOME__/")
    assert cp["Install"]["WantedBy"] == "multi-user.target"
    assert "network-online.target" in cp["Unit"]["After"]
    assert int(svc["LimitNOFILE"]) >= 4096
    yaml_text = (DEPLOY / "systemd" / "README.md").read_text(encoding="utf-8")
    assert "bearer_token_env: SEREN_HIPPOCAMPUS_TOKEN" in yaml_text
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here: parsed only")
    # the README's own sed, run as written for this account (root here, where it once made /home/root/...)
    home = fake_home(tmp_path)
    readme = (DEPLOY / "systemd" / "README.md").read_text(encoding="utf-8")
    sed = next(line for line in readme.splitlines() if line.startswith("sed ")).split(" \\")[0]
    res = subprocess.run(["bash", "-c", sed], cwd=str(UNIT.parents[2]), capture_output=True, text=True, timeout=30,
                         env={**os.environ, "HOME": str(home)})
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "__TARGET" not in text and f"ExecStart=\"{home}/seren-venvs/hippocampus/bin/python\"" in text
    assert f"User={getpass.getuser()}" in text
    unit = tmp_path / "seren-hippocampus.service"
    unit.write_text(text, encoding="utf-8")
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "seren-hippocampus.service" not in res.stderr, res.stderr   # no complaint about our unit


def test_the_systemd_unit_starts_the_right_command_for_a_home_with_a_space(tmp_path):
    """A home folder with a space: the unit, made by the README's sed, must still run that python on that
    config (unquoted, systemd took "/home/my" as the command and refused the unit)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here")
    home = tmp_path / "my home"
    (home / "seren-hippocampus").mkdir(parents=True)
    cfg = home / "seren-hippocampus" / "seren-hippocampus.yaml"
    cfg.write_text("{}\n")
    python = home / "seren-venvs" / "hippocampus" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    readme = (DEPLOY / "systemd" / "README.md").read_text(encoding="utf-8")
    sed = next(line for line in readme.splitlines() if line.startswith("sed ")).split(" \\")[0]
    res = subprocess.run(["bash", "-c", sed], cwd=str(UNIT.parents[2]), capture_output=True, text=True, timeout=30,
                         env={**os.environ, "HOME": str(home)})
    assert res.returncode == 0, res.stderr
    exec_start = next(ln for ln in res.stdout.splitlines() if ln.startswith("ExecStart="))[len("ExecStart="):]
    assert shlex.split(exec_start) == [str(python), "-m", "seren_hippocampus", "--config", str(cfg)], exec_start
    unit = tmp_path / "seren-hippocampus.service"
    unit.write_text(res.stdout, encoding="utf-8")
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_jetson_page_s_sed_makes_a_unit_systemd_takes(tmp_path):
    """The Jetson page's own "Running under systemd" sed, as written: every placeholder filled, and the unit
    verifies (a __TARGET_HOME__ left in WorkingDirectory= is a unit systemd will not start)."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("no systemd-analyze here")
    home = fake_home(tmp_path)
    page = (DEPLOY / "jetson" / "README.md").read_text(encoding="utf-8").split("## Running under systemd", 1)[1]
    sed = next(line for line in page.splitlines() if line.startswith("sed ")).split(" \\")[0]
    res = subprocess.run(["bash", "-c", sed], cwd=str(UNIT.parents[2]), capture_output=True, text=True, timeout=30,
                         env={**os.environ, "HOME": str(home)})
    assert res.returncode == 0, res.stderr
    assert "__TARGET" not in res.stdout, [ln for ln in res.stdout.splitlines() if "__TARGET" in ln]
    unit = tmp_path / "seren-hippocampus.service"
    unit.write_text(res.stdout, encoding="utf-8")
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_unit_does_not_restart_a_start_that_a_config_or_flag_error_ended(tmp_path):
    """A refused flag in ExecStart (exit 2) or the open-LAN refusal (exit 78) ends the start the same way each
    time: systemd must not restart it every 5 s forever, as it did for exit 2."""
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str
    cp.read(UNIT, encoding="utf-8")
    kept = cp["Service"]["RestartPreventExitStatus"].split()
    cfg = _yaml(tmp_path / "h.yaml", {"model": {"url": ""}, "sleep": {"mode": "external"}})
    lan = _yaml(tmp_path / "lan.yaml", {"server": {"host": "0.0.0.0", "port": free_port()}})
    for args in (["--config", str(cfg), "--tend-every", "30"], ["--config", str(cfg), "--no-such-flag"],
                 ["--config", str(lan)]):
        res = _cli(*args, cwd=tmp_path)
        assert res.returncode != 0 and str(res.returncode) in kept, (args, res.returncode, kept, res.stderr[-500:])


# ---------------------------------------------------------------- the Jetson profile

def _draft_tokens(cfg) -> int:
    """A real drafting prompt for a full pile and a full set of candidates; tokens ~ chars / 3.5."""
    from hippocampus.drafting.prompt import SUMMARY_CHARS, Steer, draft_prompt

    words = "the afternoon tea on the porch was green and warm again today "
    entries = [{"id": f"short-{i}", "content": (words * 10)[:400],
                "metadata": {"topic": "tea, afternoons", "ts": 1767225600.0 + i}} for i in range(cfg.sleep.pile_max)]
    cores = [{"id": f"core-{i}", "content": (words * 40)[:cfg.sleep.core_chars], "satellites": 12,
              "via": words * 5} for i in range(cfg.sleep.candidate_cores)]
    steer = Steer(summary=(words * 40)[:SUMMARY_CHARS], promote=["tea", "afternoons"], noise=["weather"])
    prompt, _ = draft_prompt(voice_block="", steer=steer, topic="tea, afternoons", entries=entries,
                             candidates=cores, core_chars=cfg.sleep.core_chars)
    assert prompt.count("\n[f") == cfg.sleep.pile_max and prompt.count("\n[c") == cfg.sleep.candidate_cores
    return math.ceil(len(prompt) / 3.5)


def _context(server_args: str) -> int:
    args = shlex.split(server_args)
    for flag in ("-c", "--ctx-size"):
        if flag in args:
            return int(args[args.index(flag) + 1])
    raise AssertionError(f"no -c in {server_args!r}")


def _fits(cfg) -> tuple:
    tokens = _draft_tokens(cfg)
    ctx = _context(cfg.model.lifecycle.server_args)
    return tokens + cfg.model.max_tokens, ctx


def test_the_jetson_profile_loads_clean_and_its_prompt_fits_the_context():
    from hippocampus import config as cm

    tokens = {"SEREN_HIPPOCAMPUS_TOKEN": "t", "SEREN_MEMORY_TOKEN": "m"}     # what its .env file sets
    cfg = cm.load(str(JETSON), environ=tokens, announce=False)
    assert cfg.warnings == []
    unset = cm.load(str(JETSON), environ={}, announce=False).warnings      # without them, both named
    assert [w.split(" names ")[0] for w in unset] == ["'server.bearer_token_env'", "'memory.bearer_token_env'"]
    lc = cfg.model.lifecycle
    assert lc.handover is True and lc.keep_warm_seconds == 0 and cfg.sleep.tend_cycle is False
    assert lc.server == "~/llama.cpp/build/bin/llama-server"
    assert lc.model_path.startswith("/mnt/nvme/models/") and lc.model_path.endswith(".gguf")
    assert lc.managed and lc.built and not lc.via_observatory
    assert "-ngl 99" in lc.server_args
    assert cfg.server.bearer_token_env == "SEREN_HIPPOCAMPUS_TOKEN"
    need, ctx = _fits(cfg)
    assert ctx <= 4096, "a 4 GB Nano profile"
    assert need <= ctx, f"prompt + max_tokens = {need} tokens > -c {ctx}"


def test_the_4gb_card_sample_loads_clean_and_fits():
    from hippocampus import config as cm

    text = CARD_4GB.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    from ruamel.yaml import YAML

    cfg = cm.build(YAML(typ="safe", pure=True).load(block), environ={})
    assert cfg.warnings == []
    lc = cfg.model.lifecycle
    assert lc.managed and lc.handover is True and cfg.sleep.tend_cycle is False
    need, ctx = _fits(cfg)
    assert need <= ctx, f"prompt + max_tokens = {need} tokens > -c {ctx}"


# ---------------------------------------------------------------- the installer card's flags

def _check_config(tmp_path, *args: str) -> tuple:
    res = _cli("check-config", "--offline", *args, cwd=tmp_path)      # the flags alone: nothing is reached
    head, _, tail = res.stdout.partition("\n# config file:")
    return res, (json.loads(head) if head.strip().startswith("{") else None), tail


def test_the_flags_override_the_yaml_and_show_in_check_config(tmp_path):
    cfg = _yaml(tmp_path / "h.yaml", {
        "model": {"max_tokens": 2000, "lifecycle": {"server_args": "-ngl 10"}},
        "sleep": {"tend_cycle": True, "tend_interval_seconds": 600},
        "ripple": {"type": "", "run_as": "someone"},
    })
    res, data, _ = _check_config(tmp_path, "--config", str(cfg), "--tend-cycle", "off")
    assert res.returncode == 0, res.stderr
    assert data["sleep"]["tend_cycle"] is False
    assert "# overridden by flags: sleep.tend_cycle" in res.stdout

    res, data, tail = _check_config(
        tmp_path, "--config", str(cfg), "--tend-every", "120",
        "--model-server", "/opt/llama/llama-server", "--model-path", "/models/small.gguf",
        "--model-args=-ngl 99 -c 4096", "--model-max-tokens", "1024", "--model-handover",
        "--model-parallel", "3", "--ripple", "script", "--ripple-command", 'claude -p "{message}" --allowedTools "mcp__seren"',
        "--ripple-run-as", "wren", "--ripple-stdin", "--voice-card", "--mcp")
    assert res.returncode == 0, res.stderr
    assert data["sleep"]["tend_cycle"] is True and data["sleep"]["tend_interval_seconds"] == 120
    lc = data["model"]["lifecycle"]
    assert (lc["server"], lc["model_path"], lc["server_args"]) == ("/opt/llama/llama-server", "/models/small.gguf",
                                                                   "-ngl 99 -c 4096")
    assert lc["manage"] is True and lc["handover"] is True
    assert data["model"]["max_tokens"] == 1024 and data["model"]["parallel"] == 3
    rp = data["ripple"]
    assert rp["type"] == "script" and rp["command"] == ["claude", "-p", "{message}", "--allowedTools", "mcp__seren"]
    assert rp["run_as"] == "wren" and rp["stdin"] is True
    assert data["voice"]["enabled"] is True
    assert "MCP:" in res.stderr and "[mcp]" in res.stderr

    res, data, _ = _check_config(tmp_path, "--config", str(cfg), "--ripple", "endpoint",
                                 "--ripple-url", "http://observatory:7401/api/v1/ripple", "--ripple-token", "sekrit")
    assert res.returncode == 0, res.stderr
    assert data["ripple"]["type"] == "endpoint" and data["ripple"]["bearer_token"] == "(set)"
    assert "sekrit" not in res.stdout
    res, data, _ = _check_config(tmp_path, "--config", str(cfg), "--ripple", "off")
    assert data["ripple"]["type"] == ""

    res, data, _ = _check_config(tmp_path, "--config", str(cfg))          # no flag: the yaml as it is
    assert data["sleep"]["tend_cycle"] is True and data["model"]["max_tokens"] == 2000
    assert data["model"]["lifecycle"]["server_args"] == "-ngl 10" and "overridden" not in res.stdout


@pytest.mark.parametrize("args, says", [
    (["--tend-every", "30"], "--tend-every must be at least 60 seconds, not 30"),
    (["--tend-cycle", "off", "--tend-every", "120"], "--tend-cycle off"),
    (["--model-max-tokens", "20"], "64 to 32768"),
    (["--model-parallel", "9"], "1 to 8"),
    (["--model-handover"], "--model-server"),
    (["--model-server", "/opt/llama/llama-server"], "--model-path"),      # alone, the service never starts it
    (["--model-path", "/models/small.gguf"], "--model-server"),
    (["--ripple", "endpoint"], "--ripple-url"),
])
def test_the_card_refusals_exit_2(tmp_path, args, says):
    cfg = _yaml(tmp_path / "h.yaml", {"sleep": {"mode": "external"}})
    res = _cli("check-config", "--config", str(cfg), *args, cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert says in res.stderr


def test_the_flags_reach_serve_and_the_bare_command_and_help_explains_each():
    from hippocampus import config as cm
    from hippocampus.__main__ import build_parser
    from hippocampus.cli.flags import apply_flags

    p = build_parser()
    for argv in (["--tend-cycle", "off", "--model-max-tokens", "512"],
                 ["serve", "--tend-cycle", "off", "--model-max-tokens", "512"],
                 ["--tend-cycle", "off", "serve", "--model-max-tokens", "512"]):
        args = p.parse_args(argv)
        cfg = cm.build({}, environ={})
        changed = apply_flags(cfg, args, say=lambda line: None)
        assert cfg.sleep.tend_cycle is False and cfg.model.max_tokens == 512, argv
        assert set(changed) == {"sleep.tend_cycle", "model.max_tokens"}
    cfg = cm.build({"sleep": {"tend_cycle": False}}, environ={})
    assert apply_flags(cfg, p.parse_args(["serve"]), say=lambda line: None) == []
    assert cfg.sleep.tend_cycle is False
    help_text = " ".join(p.format_help().split())
    for flag in ("--tend-cycle", "--tend-every", "--model-server", "--model-path", "--model-args",
                 "--model-max-tokens", "--model-parallel", "--model-handover", "--mcp", "--ripple ", "--ripple-command",
                 "--ripple-url", "--ripple-token", "--ripple-run-as", "--ripple-stdin", "--voice-card"):
        assert flag in help_text, flag
    serve_help = subprocess.run([sys.executable, "-m", "hippocampus", "serve", "--help"], capture_output=True,
                                text=True, env=_env(), timeout=60)
    assert serve_help.returncode == 0 and "--model-handover" in serve_help.stdout


# ---------------------------------------------------------------- the demo

def _demo(tmp_path, *extra: str) -> subprocess.CompletedProcess:
    res = subprocess.run([sys.executable, "-m", "hippocampus", "demo", "--once", "--port", "0", *extra],
                         capture_output=True, text=True, env=_env(), cwd=str(tmp_path), timeout=60)
    store = re.search(r"store in (\S+)\)", res.stdout)
    assert store, res.stdout + res.stderr
    assert not Path(store.group(1)).exists(), "the demo left its temporary store behind"
    return res


def _landed(stdout: str) -> list:
    """The memories printed after 'landed:', one per '* [topic] content' line."""
    tail = stdout.split("landed:", 1)[1]
    return [line.split("* [", 1)[1].split("] ", 1)[1] for line in tail.splitlines() if "* [" in line]


def test_the_demo_runs_one_mechanical_cycle_and_prints_what_landed(tmp_path):
    res = _demo(tmp_path)
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    assert "viewer: http://127.0.0.1:" in out and "/viewer" in out
    for step in ("sleep:", "draft_submitted", "review:", "deny", "chain_ended", "chain_closed", "landed:"):
        assert step in out, step
    landed = _landed(out)
    assert len(landed) == 2, out
    assert any("green tea" in m.lower() for m in landed) and any("sourdough" in m.lower() for m in landed)
    assert not any("rose" in m.lower() for m in landed)                   # the denied one never landed


def test_the_demo_with_the_scripted_model_redrafts_from_the_critique(scripted_demo):
    res = scripted_demo
    out = res.stdout
    assert res.returncode == 0, out + res.stderr
    for step in ("scripted small model", "draft_submitted", "deny", "tend_resubmitted", "redraft",
                 "chain_closed", "landed:"):
        assert step in out, step
    landed = _landed(out)
    assert len(landed) == 3, out
    assert "The rose garden by the gate is tended with care and bloomed early this year." in landed
    assert "The garden has roses." not in landed
