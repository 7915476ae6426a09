"""Start-up that catches a person's mistakes (issue 20), against the real process and the real service:
a held port ends the start at once with one line and nothing left; check-config says "no warnings" or
exits 1; a bearer pointer to an unset variable is named at start and by check-config; the log is quiet
about reads that succeeded."""
from __future__ import annotations

import io
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for
from tests.service.test_process import Proc, _env, _yaml

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "deploy" / "seren-hippocampus.yaml.sample"
POSIX = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")


def _held_port() -> socket.socket:
    """A port another process would hold: bound and listening, on loopback."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    return s


def _state_config(tmp_path: Path, port: int, **server) -> str:
    return _yaml(tmp_path / "h.yaml", {"server": {"port": port, **server},
                                       "memory": {"url": f"http://127.0.0.1:{free_port()}"},
                                       "model": {"url": ""},
                                       "sleep": {"mode": "external",
                                                 "state_path": str(tmp_path / "s" / "state.json")}})


def _check_config(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hippocampus", "check-config", *args], capture_output=True,
                          text=True, encoding="utf-8", env=env or _env(), cwd=str(ROOT), timeout=60)


# ---------------------------------------------------------------- a port that cannot be bound

def _load_seconds() -> float:
    """How long this box takes just now to start Python and load the service's code, running none of it."""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import hippocampus.__main__, hippocampus.service.root"], check=True,
                   env=_env(), cwd=str(ROOT), timeout=60)
    return time.monotonic() - t0


@POSIX
def test_a_held_port_exits_1_at_once_with_one_line_and_nothing_left(tmp_path):
    load = _load_seconds()          # a loaded box slows the imports, not the start: "at once" is 2 s beyond them
    with _held_port() as held:
        port = held.getsockname()[1]
        t0 = time.monotonic()
        p = Proc(tmp_path, _state_config(tmp_path, port))
        try:
            rc = p.p.wait(timeout=load + 2)
        except subprocess.TimeoutExpired:
            p.kill()
            raise AssertionError(f"still running 2 s after loading its code ({load:.1f} s) on a held port:\n"
                                 f"{p.stderr()}") from None
        took = time.monotonic() - t0
    err = p.stderr() + p.out.read_text(encoding="utf-8", errors="replace")
    assert rc == 1, err
    assert took < load + 2.0, (took, load)
    assert "Traceback" not in err, err
    said = [ln for ln in err.splitlines() if "cannot listen" in ln]
    assert len(said) == 1, err
    line = said[0]
    assert f"127.0.0.1:{port}" in line and "another process holds" in line, line
    assert "server.port: 0" in line, line
    assert "listening on" not in err, "a line said it was listening on a port it could not bind"
    # it names a port to pick, and that port could be bound
    picked = int(line.split(" is free now")[0].rsplit("(", 1)[1])
    assert picked != port
    # no process left: the one started is gone (it started no children before the bind)
    with pytest.raises(ProcessLookupError):
        os.kill(p.p.pid, 0)


HOLDER = "import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1); " \
         "print(s.getsockname()[1], flush=True); sys.stdin.read()"


@POSIX
def test_a_port_held_by_another_program_names_its_pid_and_name_in_the_one_line(tmp_path):
    """Issue 32, item 8: another process (a real one, started here) holds the port; the one bind-failure line
    says who, as the OS tells it (pid and program name), beside a free port to pick instead."""
    import psutil

    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        port = int(holder.stdout.readline())
        name = psutil.Process(holder.pid).name()
        r = subprocess.run([sys.executable, "-m", "hippocampus", "serve", "--config",
                            _state_config(tmp_path, port)], capture_output=True, text=True, env=_env(),
                           cwd=str(tmp_path), timeout=30)
    finally:
        holder.communicate("", timeout=10)
    said = [ln for ln in r.stderr.splitlines() if "cannot listen" in ln]
    assert r.returncode == 1 and len(said) == 1, r.stderr
    assert f"another process holds port {port} (pid {holder.pid}, {name}). Stop that process" in said[0], said[0]


@POSIX
@pytest.mark.parametrize("where", ["before", "after"])
def test_the_global_options_are_taken_after_the_subcommand_too(tmp_path, where):
    """`seren-hippocampus serve --log-level DEBUG --config FILE` as well as `--log-level DEBUG serve`: the
    level is in force (DEBUG lines in the log) and the config is the one given."""
    port = free_port()
    cfg = _state_config(tmp_path, port)
    args = ["serve", "--log-level", "DEBUG", "--config", cfg] if where == "after" else \
        ["--log-level", "DEBUG", "--config", cfg, "serve"]
    err = tmp_path / "err.txt"
    with err.open("wb") as fh:
        p = subprocess.Popen([sys.executable, "-m", "hippocampus", *args], stdout=subprocess.DEVNULL, stderr=fh,
                             env=_env(), cwd=str(tmp_path))
    try:
        wait_for(lambda: f"ready on http://127.0.0.1:{port}" in err.read_text(errors="replace") or
                 p.poll() is not None, timeout=30, what="the start")
        text = err.read_text(errors="replace")
        assert p.poll() is None, text
        assert " DEBUG " in text, text
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=15)
    r = _check_config("--log-level", "ERROR", "--config", str(SAMPLE), env={**_env(), "HOME": str(tmp_path)})
    assert "unrecognized arguments" not in r.stderr and f"# config file: {SAMPLE}" in r.stdout, r.stderr


@POSIX
def test_a_missing_config_file_says_so_on_the_first_line(tmp_path):
    """The lenient rule (it runs on defaults) on the first line; here the default port is held too, so the
    start ends at once and the test needs no stop."""
    with _held_port() as held:
        port = held.getsockname()[1]
        env = {**_env(), "HOME": str(tmp_path), "SEREN_HIPPOCAMPUS_PORT": str(port)}
        r = subprocess.run([sys.executable, "-m", "hippocampus", "--config", str(tmp_path / "absent.yaml")],
                           capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=30)
    lines = r.stderr.splitlines()
    assert r.returncode == 1, r.stderr
    assert "absent.yaml does not exist; running on defaults" in lines[0], r.stderr


def test_the_service_host_reports_a_failed_start_and_leaves_nothing_running(tmp_path):
    """What the Windows service runs: a held port is BindError (one line in its log, no traceback),
    `failed` is set, and no thread or actor of the service is left."""
    import pykka

    from hippocampus.service.root import BindError
    from hippocampus.service.host import ServiceHost

    threads_before = set(threading.enumerate())
    actors_before = set(pykka.ActorRegistry.get_all())
    with _held_port() as held:
        port = held.getsockname()[1]
        host = ServiceHost(_state_config(tmp_path, port), tmp_path / "logs")
        with pytest.raises(BindError) as caught:
            host.start()
    assert host.failed is True
    assert f"127.0.0.1:{port}" in str(caught.value)
    logged = (tmp_path / "logs" / "seren-hippocampus.log").read_text(encoding="utf-8")
    assert "Traceback" not in logged, logged
    errors = [ln for ln in logged.splitlines() if " ERROR " in ln]
    assert len(errors) == 1 and f"cannot listen on 127.0.0.1:{port}" in errors[0], logged
    wait_for(lambda: set(threading.enumerate()) <= threads_before, timeout=5, what="waitress's threads to end")
    assert set(pykka.ActorRegistry.get_all()) == actors_before


@pytest.mark.parametrize("host, says", [
    ("192.0.2.1", "192.0.2.1 is not an address of this machine. Set server.host to 127.0.0.1"),   # TEST-NET-1
    ("no-such-host.invalid", "'no-such-host.invalid' is not a host name or address this machine can resolve"),
])
def test_an_address_that_is_not_this_machines_is_one_line_and_nothing_starts(make_config, host, says):
    from hippocampus.service.root import BindError, Service

    threads_before = set(threading.enumerate())
    cfg = make_config(server={"host": host, "port": free_port()})
    with pytest.raises(BindError) as caught:
        Service(cfg).start()
    line = str(caught.value)
    assert line.startswith(f"cannot listen on {host}:{cfg.server.port}: ") and says in line, line
    assert "\n" not in line
    wait_for(lambda: set(threading.enumerate()) <= threads_before, timeout=5, what="waitress's threads to end")


# ---------------------------------------------------------------- check-config

def test_check_config_says_no_warnings_on_the_sample_and_exits_1_on_a_missing_file(tmp_path):
    r = _check_config("--offline", "--config", str(SAMPLE))      # the sample's Memory is not running here
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == "no warnings", r.stdout[-500:]
    missing = tmp_path / "nowhere.yaml"
    r = _check_config("--offline", "--config", str(missing))
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == \
        f"warning: config file {missing} does not exist; running on defaults", r.stdout[-500:]
    assert "no warnings" not in r.stdout


def test_check_config_names_an_env_pointer_to_an_unset_variable_and_exits_1(tmp_path):
    p = _yaml(tmp_path / "h.yaml", {"server": {"bearer_token_env": "HX_TOKEN_ISSUE20"}})
    env = {k: v for k, v in _env().items() if k != "HX_TOKEN_ISSUE20"}
    r = _check_config("--offline", "--config", p, env=env)      # the default Memory and model are not running
    assert r.returncode == 1, r.stdout + r.stderr
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert warnings == ["warning: 'server.bearer_token_env' names HX_TOKEN_ISSUE20, which is not set in the "
                        "environment: the service runs without a bearer on 127.0.0.1:7424 (loopback: this box "
                        "only)"], r.stdout
    assert "HX_TOKEN_ISSUE20" not in r.stderr, "the library's own warning was printed as well"


@POSIX
def test_the_service_names_an_unset_bearer_variable_in_one_start_up_line(tmp_path):
    port = free_port()
    cfg = _state_config(tmp_path, port, bearer_token_env="HX_TOKEN_ISSUE20")
    p = Proc(tmp_path, cfg)
    try:
        p.wait_healthy(port)
        err = p.stderr()
        named = [ln for ln in err.splitlines() if "HX_TOKEN_ISSUE20" in ln]
        assert len(named) == 1, err
        assert "which is not set" in named[0] and "runs without a bearer" in named[0], named
        assert "falling through" not in err, err
        assert p.stop(signal.SIGTERM) == 0, p.stderr()
    finally:
        p.kill()


# ---------------------------------------------------------------- a quiet log

@pytest.fixture
def http_log():
    """Every line of the request logger, at every level, as records."""
    records: list = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = logging.getLogger("hippocampus.http")
    handler, old = Keep(level=logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(old)


def test_a_burst_of_status_polls_adds_no_info_line_and_a_nudge_adds_one(make_config, start_service, http_log):
    svc = start_service(make_config())
    with requests.Session() as s:
        for _ in range(100):
            assert s.get(svc.url + "/status", timeout=10).status_code == 200
        polled = list(http_log)
        assert s.post(svc.url + "/nudge", json={}, timeout=10).status_code == 200
        assert s.get(svc.url + "/no-such-route", timeout=10).status_code == 404
    info = [r.getMessage() for r in polled if r.levelno >= logging.INFO]
    assert info == [], info
    assert len([r for r in polled if r.levelno == logging.DEBUG and "GET /status -> 200" in r.getMessage()]) == 100
    after = [r.getMessage() for r in http_log[len(polled):] if r.levelno >= logging.INFO]
    assert len(after) == 2, after
    assert after[0].startswith("POST /nudge -> 200"), after
    assert after[1].startswith("GET /no-such-route -> 404"), after


def test_an_mcp_call_adds_no_sdk_session_line(make_config, start_service):
    svc = start_service(make_config())
    if svc.mcp is None:
        pytest.skip("no [mcp] extra")
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)          # the transport line is DEBUG since one INFO line names each tool call
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                           "clientInfo": {"name": "issue-20", "version": "0"}}}
        r = requests.post(svc.url + "/mcp", json=body, timeout=30,
                          headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 200, r.text
        wait_for(lambda: "POST /mcp" in out.getvalue(), timeout=5, what="the request line")
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
    text = out.getvalue()
    assert "Terminating session" not in text and "Created new transport" not in text, text


def test_check_config_warns_of_the_open_lan_refusal_the_service_would_make_and_exits_1(tmp_path):
    """A host beyond loopback with no bearer: the service refuses to start (exit 78), so check-config must not say
    "no warnings" and exit 0 on it; the one warning says what to do (and an empty pointer is not named twice)."""
    p = _yaml(tmp_path / "h.yaml", {"server": {"host": "0.0.0.0", "port": free_port()}})
    r = _check_config("--offline", "--config", p)
    assert r.returncode == 1, r.stdout + r.stderr
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert len(warnings) == 1 and "refuses to start" in warnings[0], r.stdout[-800:]
    for way in ("127.0.0.1", "bearer_token_env", "allow_open_lan: true", "SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN=1"):
        assert way in warnings[0], warnings[0]
    assert "no warnings" not in r.stdout
    r = _check_config("--offline", "--config", p, env={**_env(), "SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN": "1"})
    assert r.returncode == 0 and r.stdout.rstrip().splitlines()[-1] == "no warnings", r.stdout[-800:]
    pointed = _yaml(tmp_path / "p.yaml", {"server": {"host": "0.0.0.0", "bearer_token_env": "HX_TOKEN_G48"}})
    r = _check_config("--offline", "--config", pointed, env={k: v for k, v in _env().items() if k != "HX_TOKEN_G48"})
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert r.returncode == 1 and len(warnings) == 1 and "refuses to start" in warnings[0], r.stdout[-800:]


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_check_config_offline_warns_of_the_state_folder_the_service_refuses_and_exits_1(tmp_path):
    """Found: `check-config --offline` said "no warnings" and exited 0 on a state folder others may write in, which
    the service refuses at start (exit 1): offline skipped the folder's look, which reaches nothing."""
    p = _state_config(tmp_path, free_port())
    (tmp_path / "s").mkdir()
    os.chmod(tmp_path / "s", 0o777)
    r = _check_config("--offline", "--config", p)
    warnings = [ln for ln in r.stdout.splitlines() if ln.startswith("warning: ")]
    assert r.returncode == 1 and len(warnings) == 1, r.stdout[-800:]
    assert "refuses to start" in warnings[0] and f"chmod 700 {tmp_path / 's'}" in warnings[0], warnings[0]
    start = subprocess.run([sys.executable, "-m", "hippocampus", "--config", p], capture_output=True, text=True,
                           encoding="utf-8", env=_env(), cwd=str(ROOT), timeout=60)
    assert start.returncode == 1 and f"chmod 700 {tmp_path / 's'}" in start.stderr, start.stderr[-800:]


@pytest.mark.parametrize("args", [["--log-level", "DEUBG", "check-config", "--offline"],
                                  ["check-config", "--offline", "--log-level", "loud"],
                                  ["check-ripple", "--log-level", "verbose"]])
def test_a_log_level_that_is_not_one_is_refused_not_taken_as_info(args):
    """`--log-level DEUBG` ran at INFO without a word (the DEBUG lines asked for never came); it is refused like
    any bad flag value (the next test: any case of a real level, or warn, is still taken)."""
    r = subprocess.run([sys.executable, "-m", "hippocampus", *args, "--config", str(SAMPLE)], capture_output=True,
                       text=True, encoding="utf-8", env=_env(), cwd=str(ROOT), timeout=60)
    assert r.returncode == 2 and "--log-level" in r.stderr and "DEBUG, INFO, WARNING or ERROR" in r.stderr, \
        (r.returncode, r.stderr[-600:])


def test_any_case_of_a_real_log_level_or_warn_is_still_taken():
    """Once, not once per refused spelling above: these three check-config runs do not depend on it."""
    for given in ("debug", "warn", "Error"):
        r = _check_config("--offline", "--log-level", given, "--config", str(SAMPLE))
        assert r.returncode == 0 and r.stdout.rstrip().endswith("no warnings"), r.stderr[-600:]


def test_the_service_host_logs_the_open_lan_refusal_as_the_refusal_not_a_traceback(tmp_path):
    """What the Windows service runs, beyond loopback with no bearer: the log holds the family's refusal, its
    ways out, once and without a traceback (the words are what the person must read), and nothing starts."""
    from hippocampus.service.host import ServiceHost

    host = ServiceHost(_state_config(tmp_path, free_port(), host="0.0.0.0"), tmp_path / "logs")
    with pytest.raises(RuntimeError, match="REFUSING TO START"):
        host.start()
    assert host.failed is True and host.service is None
    logged = (tmp_path / "logs" / "seren-hippocampus.log").read_text(encoding="utf-8")
    assert "Traceback" not in logged and logged.count("REFUSING TO START") == 1, logged
    assert "allow_open_lan: true" in logged and "host: 127.0.0.1" in logged, logged


def test_an_ipv6_loopback_service_names_a_url_that_works(make_config, start_service):
    """host ::1: the start-up line said `ready on http://::1:PORT  viewer: http://::1:PORT/viewer`, a URL no
    browser or curl takes; the URL it names is bracketed and answers."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    svc = start_service(make_config(server={"host": "::1"}))
    assert svc.url == f"http://[::1]:{svc.port}", svc.url
    assert requests.get(svc.url + "/health", timeout=10).json()["ok"] is True
