"""check-config tries what the config names (issue 32, item 3): a Memory URL and a model URL nothing listens on,
a ripple command that is not on the PATH and a model server path that does not exist are each a warning with
its fix (exit 1), where they used to pass as "no warnings"; what answers is a `# reached` line; --offline
reaches nothing. The real command, in a subprocess, against real sockets and a real SerenMemory."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.harness.fake_model import FakeModel
from tests.harness.memory_server import free_port
from tests.service.test_process import _env, _yaml

ROOT = Path(__file__).resolve().parents[2]


def _check_config(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hippocampus", "check-config", *args], capture_output=True,
                          text=True, encoding="utf-8", env=env or _env(), cwd=str(ROOT), timeout=60)


def _warnings(r: subprocess.CompletedProcess) -> list:
    return [ln[len("warning: "):] for ln in r.stdout.splitlines() if ln.startswith("warning: ")]


def _bad_config(tmp_path: Path, memory_port: int, model_port: int) -> str:
    return _yaml(tmp_path / "bad.yaml", {
        "memory": {"url": f"http://user:pw@127.0.0.1:{memory_port}/?key=abc"},
        "model": {"url": f"http://127.0.0.1:{model_port}/v1",
                  "lifecycle": {"manage": True, "server": str(tmp_path / "nowhere" / "llama-server")}},
        "ripple": {"type": "script", "command": ["claudee", "-p", "{message}"]},
        "sleep": {"state_path": str(tmp_path / "s" / "state.json")},
    })


def test_what_would_fail_at_bedtime_is_a_warning_each_with_its_fix(tmp_path):
    memory_port, model_port = free_port(), free_port()
    r = _check_config("--config", _bad_config(tmp_path, memory_port, model_port),
                      env={**_env(), "PATH": str(tmp_path)})      # claudee is on no PATH
    assert r.returncode == 1, r.stdout + r.stderr
    w = _warnings(r)
    mem = [x for x in w if x.startswith("memory.url ")]
    assert len(mem) == 1 and mem[0].startswith(f"memory.url http://***@127.0.0.1:{memory_port}/?key=*** does not "
                                               "answer ("), w
    assert "start SerenMemory there" in mem[0] and "set memory.url to where it listens" in mem[0]
    model = [x for x in w if x.startswith("model.url ")]
    assert len(model) == 1 and model[0].startswith(f"model.url http://127.0.0.1:{model_port}/v1 does not answer"), w
    assert "start the model server there, or set model.url to where it listens" in model[0]
    server = [x for x in w if x.startswith("model.lifecycle.server ")]
    assert server == [f"model.lifecycle.server {tmp_path / 'nowhere' / 'llama-server'} does not exist: the model "
                      "cannot be started at bedtime; install the server (llama-server) there, or set "
                      "model.lifecycle.server to its full path"], w
    ripple = [x for x in w if x.startswith("ripple command: ")]
    assert len(ripple) == 1 and "'claudee' is not on" in ripple[0] and "give its absolute path in ripple.command" \
        in ripple[0], w
    assert len(w) == 4, w
    assert "user:pw" not in r.stdout + r.stderr and "key=abc" not in r.stdout + r.stderr


def test_offline_reaches_nothing_and_so_finds_nothing(tmp_path):
    with socket.socket() as listening:          # Memory's URL: a real port that counts who comes
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        r = _check_config("--offline", "--config", _bad_config(tmp_path, listening.getsockname()[1], free_port()),
                          env={**_env(), "PATH": str(tmp_path)})
        listening.setblocking(False)
        try:
            listening.accept()[0].close()
            came = True
        except BlockingIOError:
            came = False
    assert r.returncode == 0, r.stdout + r.stderr
    assert not came, "--offline connected to Memory's URL"
    assert r.stdout.rstrip().splitlines()[-1] == "no warnings", r.stdout[-800:]
    assert "# offline: Memory, the model, its server and files and the ripple command were not probed" in r.stdout
    assert "# reached" not in r.stdout and "# model context" not in r.stdout


def test_what_answers_is_named_and_passes(tmp_path, memory):
    model = FakeModel().start()
    try:
        server = Path(sys.executable).resolve()                   # an executable that exists
        cfg = _yaml(tmp_path / "good.yaml", {
            "memory": {"url": memory.url},
            "model": {"url": model.url, "lifecycle": {"server": str(server)}},
            "ripple": {"type": "script", "command": [str(server), "-c", "print('{message}')"]},
            "sleep": {"state_path": str(tmp_path / "s" / "state.json")},
        })
        r = _check_config("--config", cfg)
    finally:
        model.stop()
    assert not [x for x in _warnings(r) if x.startswith(("memory.url", "model.url", "model.lifecycle", "ripple"))], \
        r.stdout[-1500:]
    assert f"# reached: Memory at {memory.url}" in r.stdout
    assert f"# reached: the model at {model.url}" in r.stdout
    assert f"# found: model.lifecycle.server {server}" in r.stdout
    assert f"# ripple command: '{server}' is {server}" in r.stdout, r.stdout[-1500:]


def test_a_state_folder_the_service_would_refuse_is_a_warning(tmp_path, memory):
    """A state folder others may write in, or another account's (one a `sudo` run left root's): the service
    refuses to start on it (exit 1, restarted every 5 s by systemd), so check-config must not pass it."""
    import os

    folder = tmp_path / "s"
    folder.mkdir()
    cfg = _yaml(tmp_path / "h.yaml", {"memory": {"url": memory.url}, "model": {"url": ""},
                                      "sleep": {"state_path": str(folder / "state.json")}})
    folder.chmod(0o777)
    r = _check_config("--config", cfg)
    assert r.returncode == 1, r.stdout[-1500:]
    assert [w for w in _warnings(r) if "state folder" in w and f"chmod 700 {folder}" in w], r.stdout[-1500:]
    folder.chmod(0o700)
    if os.geteuid() == 0:           # root can give it away: as a folder a root run left to the account
        os.chown(folder, 65534, 65534)
        r = _check_config("--config", cfg, env={**_env(), "HOME": str(tmp_path)})
        assert [w for w in _warnings(r) if "belongs to another account" in w], r.stdout[-1500:]
        os.chown(folder, 0, 0)
    r = _check_config("--config", cfg)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("no warnings"), r.stdout[-1500:]


def test_a_model_path_that_is_a_folder_is_a_warning(tmp_path):
    """Found: model.lifecycle.model_path naming a folder (the one the .gguf is in) was '# found' and no warning; at
    bedtime the start refused it ('model.lifecycle.model_path not found: <folder>') and every sleep failed."""
    folder = tmp_path / "models"
    folder.mkdir()
    cfg = _yaml(tmp_path / "h.yaml", {
        "model": {"url": f"http://127.0.0.1:{free_port()}/v1",
                  "lifecycle": {"server": str(Path(sys.executable).resolve()), "model_path": str(folder)}},
        "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
    r = _check_config("--config", cfg)
    assert r.returncode == 1, r.stdout[-1500:]
    w = [x for x in _warnings(r) if x.startswith("model.lifecycle.model_path ")]
    assert len(w) == 1 and str(folder) in w[0] and "folder" in w[0] and ".gguf" in w[0], r.stdout[-1500:]
    assert f"# found: model.lifecycle.model_path {folder}" not in r.stdout


def test_a_command_line_with_an_unclosed_quote_is_a_warning(tmp_path):
    """Found: model.lifecycle.server_args or model.lifecycle.start with an unclosed quote passed check-config
    without a word; at bedtime the start refused it ('... cannot be read as a command line (No closing
    quotation): close its quotes') and every sleep failed. The loader now says it (as it says ripple.command's),
    with the default kept, so --offline says it too."""
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    server = str(Path(sys.executable).resolve())
    for setting, lifecycle in (("server_args", {"server": server, "model_path": str(gguf), "server_args": '-c "8192'}),
                               ("start", {"manage": True, "start": f"{server} -m '{gguf}"})):
        cfg = _yaml(tmp_path / f"{setting}.yaml", {
            "model": {"url": f"http://127.0.0.1:{free_port()}/v1", "lifecycle": lifecycle},
            "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
        r = _check_config("--config", cfg)
        w = [x for x in _warnings(r) if x.startswith(f"'model.lifecycle.{setting}' = ")]
        assert r.returncode == 1 and len(w) == 1, r.stdout[-1500:]
        assert "cannot be read as a command line" in w[0] and "close its quotes" in w[0], w


def test_a_memory_url_no_request_can_be_made_to_is_a_warning_offline_and_not_reached(tmp_path):
    """Found: memory.url with a port past 65535, an unclosed [ or a scheme that is not http passed
    `check-config --offline` as "no warnings" (reaching, it said 'does not answer ... start SerenMemory there');
    the service then said at every look 'memory.url ... is not a URL this service can call'."""
    for i, url in enumerate(("http://127.0.0.1:99999", "http://[::1", "ftp://127.0.0.1:7420")):
        cfg = _yaml(tmp_path / f"h{i}.yaml", {"memory": {"url": url}, "model": {"url": ""},
                                             "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
        for args in (("--offline",), ()):
            r = _check_config(*args, "--config", cfg)
            w = [x for x in _warnings(r) if x.startswith("memory.url ")]
            assert r.returncode == 1 and len(w) == 1, r.stdout[-1500:]
            assert "is not a URL this service can call" in w[0] and "start SerenMemory there" not in w[0], w


def test_a_model_url_no_request_can_be_made_to_is_a_warning_not_a_traceback(tmp_path):
    """Found: model.url http://[::1/v1 (an unclosed bracket) made check-config print a traceback (ValueError:
    Invalid IPv6 URL), offline or not; a port past 65535 passed --offline as "no warnings"."""
    for i, url in enumerate(("http://[::1/v1", "http://127.0.0.1:99999/v1", "ftp://127.0.0.1:8080/v1")):
        cfg = _yaml(tmp_path / f"h{i}.yaml", {"memory": {"url": f"http://127.0.0.1:{free_port()}"},
                                             "model": {"url": url},
                                             "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
        for args in (("--offline",), ()):
            r = _check_config(*args, "--config", cfg)
            assert "Traceback" not in r.stderr, r.stderr[-1500:]
            w = [x for x in _warnings(r) if x.startswith("model.url ")]
            assert r.returncode == 1 and len(w) == 1, r.stdout[-1500:] + r.stderr[-500:]
            assert "is not a URL this service can call" in w[0] and "blank for mechanical mode" in w[0], w
