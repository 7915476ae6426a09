"""check-config knows what answers (issue 41, item 1): memory.url pointed at a model server or at this service,
model.url at Memory's port plus /v1, at this service's own /v1, without /v1 or with /chat/completions appended, and
a URL without http:// are each a warning that names the fix, where any answer below 500 used to be "reached";
`--json` is one JSON document with where each value came from. The real command in a subprocess, against the
real SerenMemory, stand-in model servers (the demo's, and the llama-server stand-in run as a process) and this
service itself, all on loopback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.harness.fake_model import FakeModel
from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for
from tests.service.test_process import _env, _yaml

ROOT = Path(__file__).resolve().parents[2]
FAKE_LLAMA = ROOT / "tests" / "harness" / "fake_llama_server.py"


def _check_config(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hippocampus", "check-config", *args], capture_output=True,
                          text=True, encoding="utf-8", env=env or _env(), cwd=str(ROOT), timeout=90)


def _warnings(r: subprocess.CompletedProcess, setting: str) -> list:
    return [ln[len("warning: "):] for ln in r.stdout.splitlines() if ln.startswith(f"warning: {setting} ")]


def _config(tmp_path: Path, memory_url: str, model_url: str = "") -> str:
    return _yaml(tmp_path / "h.yaml", {"memory": {"url": memory_url}, "model": {"url": model_url},
                                       "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})


@pytest.fixture
def model():
    fm = FakeModel().start()            # answers GET /models at any path, as llama-server does at / and /v1
    yield fm
    fm.stop()


@pytest.fixture
def llama(tmp_path):
    """The llama-server stand-in as a real process: its model list only at /v1/models."""
    gguf = tmp_path / "small.gguf"
    gguf.write_bytes(b"GGUF")
    port = free_port()
    p = subprocess.Popen([sys.executable, str(FAKE_LLAMA), "-m", str(gguf), "--port", str(port)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={**os.environ, "FAKE_LLAMA_WARMUP": "0"})
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return requests.get(url + "/v1/models", timeout=1).status_code == 200
        except requests.RequestException:
            return False
    try:
        wait_for(up, 20, what="the llama-server stand-in listening")
        yield url
    finally:
        p.terminate()
        p.wait(10)


@pytest.fixture
def itself(make_config, start_service):
    """This service, running on loopback; its URL."""
    return start_service(make_config()).url


def test_memory_url_at_a_model_server_is_not_reached_memory(tmp_path, model):
    at = model.url.removesuffix("/v1")
    r = _check_config("--config", _config(tmp_path, at))
    assert r.returncode == 1 and "# reached: Memory" not in r.stdout and "no warnings" not in r.stdout, r.stdout
    assert _warnings(r, "memory.url") == [
        f"memory.url {at} is a model server (GET {at}/models lists models), not SerenMemory: set memory.url "
        "to SerenMemory's own address (its default is http://127.0.0.1:7420)"], r.stdout[-1500:]


def test_memory_url_at_this_service_is_named_as_this_service(tmp_path, itself):
    r = _check_config("--config", _config(tmp_path, itself))
    assert r.returncode == 1 and "# reached: Memory" not in r.stdout, r.stdout[-1500:]
    assert _warnings(r, "memory.url") == [
        f"memory.url {itself} is this service (seren-hippocampus) itself, not SerenMemory: set memory.url to "
        "SerenMemory's own address (its default is http://127.0.0.1:7420)"], r.stdout[-1500:]


def test_model_url_at_memory_plus_v1_is_named_as_memory(tmp_path, memory):
    r = _check_config("--config", _config(tmp_path, memory.url, memory.url + "/v1"))
    assert f"# reached: Memory at {memory.url}" in r.stdout, r.stdout[-1500:]
    assert "# reached: the model" not in r.stdout and r.returncode == 1
    assert _warnings(r, "model.url") == [
        f"model.url {memory.url}/v1 is SerenMemory, not a model server: set model.url to the small model's server "
        "(an OpenAI-compatible URL ending in /v1, e.g. llama-server's http://127.0.0.1:8080/v1), or leave it blank "
        "for mechanical mode"], r.stdout[-1500:]


def test_model_url_at_this_service_s_own_v1_is_named_as_this_service(tmp_path, memory, itself):
    r = _check_config("--config", _config(tmp_path, memory.url, itself + "/v1"))
    assert "# reached: the model" not in r.stdout and r.returncode == 1
    w = _warnings(r, "model.url")
    assert w == [f"model.url {itself}/v1 is this service (seren-hippocampus) itself, not a model server: set "
                 "model.url to the small model's server (an OpenAI-compatible URL ending in /v1, e.g. "
                 "llama-server's http://127.0.0.1:8080/v1), or leave it blank for mechanical mode"], r.stdout[-1500:]


@pytest.mark.parametrize("server", ["model", "llama"])
def test_model_url_without_v1_names_the_url_with_it(tmp_path, memory, server, request):
    at = request.getfixturevalue(server)
    at = at.url.removesuffix("/v1") if server == "model" else at
    r = _check_config("--config", _config(tmp_path, memory.url, at))
    assert "# reached: the model" not in r.stdout and r.returncode == 1, r.stdout[-1500:]
    assert _warnings(r, "model.url") == [
        f"model.url {at} has no /v1: set it to {at}/v1 (an OpenAI-compatible URL ends in /v1; the service adds "
        "/chat/completions to it)"], r.stdout[-1500:]


@pytest.mark.parametrize("route", ["/chat/completions", "/completions", "/models"])
def test_model_url_with_a_route_appended_names_the_base(tmp_path, memory, model, route):
    r = _check_config("--config", _config(tmp_path, memory.url, model.url + route))
    assert r.returncode == 1, r.stdout[-1500:]
    assert _warnings(r, "model.url") == [f"model.url ends in {route}: set it to {model.url}; the service adds the "
                                         "route itself"], r.stdout[-1500:]
    assert f"# model.url set to {model.url} would reach the model" in r.stdout


def test_a_url_without_its_scheme_names_the_scheme(tmp_path, memory, model):
    bare_memory, bare_model = memory.url.removeprefix("http://"), model.url.removeprefix("http://")
    r = _check_config("--config", _config(tmp_path, bare_memory, bare_model))
    assert r.returncode == 1 and "could not be reached" not in r.stdout, r.stdout[-1500:]
    assert _warnings(r, "memory.url") == [f"memory.url {bare_memory} has no scheme, so nothing can reach it: set it "
                                          f"to {memory.url} (http:// or https:// in front)"], r.stdout[-1500:]
    assert _warnings(r, "model.url") == [f"model.url {bare_model} has no scheme, so nothing can reach it: set it to "
                                         f"{model.url} (http:// or https:// in front)"], r.stdout[-1500:]
    assert f"# memory.url set to {memory.url} would reach Memory" in r.stdout
    assert f"# model.url set to {model.url} would reach the model" in r.stdout


def test_the_right_urls_pass_with_no_warnings(tmp_path, memory, model):
    r = _check_config("--config", _config(tmp_path, memory.url, model.url))
    assert r.returncode == 0 and r.stdout.rstrip().endswith("no warnings"), r.stdout[-1500:]
    assert f"# reached: Memory at {memory.url} (GET / names SerenMemory" in r.stdout
    assert f"# reached: the model at {model.url} (GET {model.url}/models lists models)" in r.stdout


def test_json_is_one_document_naming_where_each_value_came_from(tmp_path, memory, model):
    cfg = _config(tmp_path, memory.url, model.url)
    env = {**_env(), "SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS": "7"}
    r = _check_config("--json", "--config", cfg, "--tend-cycle", "off", env=env)
    assert r.returncode == 0, r.stdout[-1500:] + r.stderr
    doc = json.loads(r.stdout)
    assert doc["warnings"] == [] and doc["config"]["sleep"]["tick_seconds"] == 7
    src = doc["sources"]
    assert (src["sleep.tick_seconds"], src["sleep.tend_cycle"], src["memory.url"], src["server.port"]) == \
        ("environment", "flag", "yaml", "default")
    assert doc["environment"] == {"sleep.tick_seconds": "SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS"}
    assert doc["config_file"] == {"path": cfg, "from": "flag"} and doc["flags"] == ["sleep.tend_cycle"]
    probes = {p["setting"]: p for p in doc["probes"]}
    assert probes["memory.url"]["answered_by"] == "memory" and probes["model.url"]["answered_by"] == "model"

    text = _check_config("--config", cfg, env=env)      # the text says it too
    assert "# from the environment: sleep.tick_seconds ($SEREN_HIPPOCAMPUS_SLEEP_TICK_SECONDS)" in text.stdout

    wrong = _check_config("--json", "--config", _config(tmp_path, memory.url, memory.url + "/v1"))
    doc = json.loads(wrong.stdout)
    assert wrong.returncode == 1
    assert {p["setting"]: p["answered_by"] for p in doc["probes"]} == {"memory.url": "memory", "model.url": "memory"}
    assert [w for w in doc["warnings"] if w.startswith("model.url ")][0].startswith(
        f"model.url {memory.url}/v1 is SerenMemory, not a model server")


@pytest.fixture
def guarded_memory(tmp_path):
    """The real SerenMemory with a bearer, as one installed with --gen-token: every call but / and /health wants it."""
    from tests.harness.memory_server import MemoryServer

    srv = MemoryServer(tmp_path / "guarded", bearer="memory-bearer-g48").start()
    yield srv
    srv.stop()


def test_a_memory_that_wants_a_bearer_this_service_lacks_is_a_warning(tmp_path, guarded_memory):
    """Memory's / and /health answer anyone, so a missing or wrong memory bearer was "reached: Memory", "no
    warnings", exit 0, while every sleep then got 401; now it is a warning that says which setting to give."""
    cfg = _yaml(tmp_path / "h.yaml", {"memory": {"url": guarded_memory.url, "bearer_token_env": "HX_MEM_G48"},
                                      "model": {"url": ""},
                                      "sleep": {"state_path": str(tmp_path / "s" / "state.json")}})
    base = {k: v for k, v in _env().items() if k != "HX_MEM_G48"}
    for env in (base, {**base, "HX_MEM_G48": "not-the-bearer"}):
        r = _check_config("--config", cfg, env=env)
        assert r.returncode == 1, r.stdout[-1500:]
        said = _warnings(r, "memory.url")
        assert len(said) == 1 and "401" in said[0] and "memory.bearer_token_env" in said[0], r.stdout[-1500:]
        assert "# reached: Memory" not in r.stdout
    r = _check_config("--config", cfg, env={**base, "HX_MEM_G48": "memory-bearer-g48"})
    assert r.returncode == 0 and r.stdout.rstrip().endswith("no warnings"), r.stdout[-1500:]
    assert f"# reached: Memory at {guarded_memory.url}" in r.stdout
