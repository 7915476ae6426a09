"""What comes from the config file and the state folder is untrusted (issue 38, items 12, 13, 14, 16), against the
real process: a yaml alias bomb is refused fast and small, naming its key, in the service and in check-config;
a `replays` link never lets the trim touch files elsewhere; a state folder another account owns, or others may
write in, is refused in one line; an edited lifecycle record never makes the service adopt (or stop) a process
that is not its model server; a read-only state folder ends the start in one line; service.lock is 0600."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for
from tests.service.test_process import Proc, _env, _yaml

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX owners, modes, links and mounts")

ROOT = Path(__file__).resolve().parents[2]
RSS_LIMIT_MB = 400          # the service or check-config, bomb and all: far below the 2.5 GB the bomb asked for


def bomb(key: str) -> str:
    """The issue's kind of file: nine levels of nine aliases (9**9 values) under `key` (`model.extra_body`)."""
    block, leaf = key.split(".")
    lines = [f"{block}:", f"  {leaf}:", '    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"    {name}: &{name} [{','.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


def _load_seconds() -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import hippocampus.__main__, hippocampus.service.root"], check=True,
                   env=_env(), cwd=str(ROOT), timeout=60)
    return time.monotonic() - t0


def _watch(p: subprocess.Popen, done, within: float, what: str) -> float:
    """Poll until done() or the deadline; the process is killed (and the test fails) past the deadline or past
    RSS_LIMIT_MB. Returns the largest RSS seen, in MB."""
    deadline, peak = time.monotonic() + within, 0.0
    while True:
        try:
            peak = max(peak, psutil.Process(p.pid).memory_info().rss / 2**20)
        except psutil.Error:
            pass
        if done():
            return peak
        if peak > RSS_LIMIT_MB or time.monotonic() > deadline:
            p.kill()
            p.wait(10)
            raise AssertionError(f"{what}: not done within {within:.1f} s, or over {RSS_LIMIT_MB} MB "
                                 f"(peak {peak:.0f} MB)")
        time.sleep(0.02)


@pytest.mark.parametrize("key", ["model.extra_body", "ripple.messages"])
def test_an_alias_bomb_is_refused_fast_and_small_by_check_config(tmp_path, key):
    path = tmp_path / "seren-hippocampus.yaml"
    path.write_text(bomb(key), encoding="utf-8")
    assert len(path.read_bytes()) < 700
    load = _load_seconds()
    with (tmp_path / "out.txt").open("wb") as out:
        p = subprocess.Popen([sys.executable, "-m", "hippocampus", "check-config", "--offline", "--config", str(path)],
                             stdout=out, stderr=subprocess.STDOUT, env=_env(), cwd=str(ROOT))
        peak = _watch(p, lambda: p.poll() is not None, load + 2, "check-config on an alias bomb")
    said = (tmp_path / "out.txt").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in said and "MemoryError" not in said, said
    warned = [ln for ln in said.splitlines() if "too many aliases" in ln]
    assert len(warned) == 1 and f"{key}: too many aliases" in warned[0] and str(path) in warned[0], said
    assert p.returncode == 1 and peak < RSS_LIMIT_MB


def test_an_alias_bomb_in_the_service_config_is_named_and_the_service_starts_on_defaults(tmp_path):
    path = tmp_path / "seren-hippocampus.yaml"
    path.write_text(bomb("model.extra_body"), encoding="utf-8")
    port = free_port()
    env = {**_env(), "SEREN_HIPPOCAMPUS_PORT": str(port), "SEREN_HIPPOCAMPUS_MODEL_URL": "",
           "SEREN_HIPPOCAMPUS_MEMORY_URL": f"http://127.0.0.1:{free_port()}",
           "SEREN_HIPPOCAMPUS_SLEEP_STATE_PATH": str(tmp_path / "s" / "state.json")}
    load = _load_seconds()
    err = tmp_path / "err.txt"
    with err.open("wb") as fh:
        p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", str(path)], stdout=fh, stderr=fh,
                             env=env, cwd=str(tmp_path))

    def ready() -> bool:
        try:
            return requests.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
        except requests.RequestException:
            return p.poll() is not None
    try:
        peak = _watch(p, ready, load + 8, "the service's start on an alias bomb")
        said = err.read_text(encoding="utf-8", errors="replace")
        assert p.poll() is None, said
        assert "model.extra_body: too many aliases" in said and "Traceback" not in said, said
        assert peak < RSS_LIMIT_MB
    finally:
        if p.poll() is None:
            p.terminate()
            p.wait(15)


# ---------------------------------------------------------------- the state folder itself

def _state_config(tmp_path: Path, state_dir: Path, port: int) -> str:
    return _yaml(tmp_path / "h.yaml", {"server": {"port": port}, "memory": {"url": f"http://127.0.0.1:{free_port()}"},
                                       "model": {"url": ""},
                                       "sleep": {"mode": "external", "state_path": str(state_dir / "state.json")}})


def _refused(tmp_path: Path, state_dir: Path) -> str:
    """Start the process on the folder; it must exit 1 within a bounded time. Returns what it said."""
    load = _load_seconds()
    p = Proc(tmp_path, _state_config(tmp_path, state_dir, free_port()))
    try:
        rc = p.p.wait(timeout=load + 5)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError(f"the service started on that state folder:\n{p.stderr()}") from None
    said = p.stderr() + p.out.read_text(encoding="utf-8", errors="replace")
    assert rc == 1, said
    assert "Traceback" not in said, said
    return said


def _one_line(said: str, words: str) -> str:
    lines = [ln for ln in said.splitlines() if words in ln]
    assert len(lines) == 1, said
    return lines[0]


def test_a_state_folder_another_account_owns_is_refused_in_one_line(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another account needs root")
    state_dir = tmp_path / "s"
    state_dir.mkdir(mode=0o700)
    os.chown(state_dir, 65534, 65534)
    line = _one_line(_refused(tmp_path, state_dir), "belongs to another account")
    assert str(state_dir) in line and "chown" in line and "sleep.state_path" in line, line
    assert not (state_dir / "state.json").exists() and not (state_dir / "service.lock").exists()


def test_a_state_folder_others_may_write_in_is_refused_in_one_line(tmp_path):
    state_dir = tmp_path / "s"
    state_dir.mkdir()
    os.chmod(state_dir, 0o777)
    line = _one_line(_refused(tmp_path, state_dir), "can be written by other accounts")
    assert str(state_dir) in line and f"chmod 700 {state_dir}" in line and "777" in line, line
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o777, "the folder is not the service's to change"


@pytest.fixture
def read_only_folder(tmp_path):
    """A state folder on a small tmpfs remounted read-only (root's writes fail there too: EROFS)."""
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a read-only mount needs root and mount(8)")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("this box does not let root mount a tmpfs")
    try:
        (mnt / "s").mkdir(mode=0o700)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True, capture_output=True)
        yield mnt / "s"
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_read_only_state_folder_ends_the_start_in_one_line(tmp_path, read_only_folder):
    line = _one_line(_refused(tmp_path, read_only_folder), "cannot be written")
    assert str(read_only_folder) in line and "Read-only file system" in line and "sleep.state_path" in line, line


def test_service_lock_is_0600_also_one_an_older_version_left_0644(make_config, start_service):
    cfg = make_config()
    folder = cfg.sleep.resolved_state_path().parent
    folder.mkdir(mode=0o700)
    (folder / "service.lock").write_text("")
    os.chmod(folder / "service.lock", 0o644)
    start_service(cfg)
    assert stat.S_IMODE((folder / "service.lock").stat().st_mode) == 0o600


# ---------------------------------------------------------------- an edited lifecycle record

def test_an_edited_lifecycle_record_adopts_and_stops_no_other_process(make_config, start_service, tmp_path, caplog):
    from tests.service.test_lifecycle_service import StandIn

    stand = StandIn(tmp_path)
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        cfg = make_config(model={"url": stand.url, "lifecycle": stand.lifecycle()})
        folder = cfg.sleep.resolved_state_path().parent
        folder.mkdir(mode=0o700)
        record = {"pid": other.pid, "created": psutil.Process(other.pid).create_time(), "started_by_us": True,
                  "cmd": [str(stand.server)], "how": "command"}
        (folder / "state.json").write_text(json.dumps({"lifecycle": record}), encoding="utf-8")
        caplog.set_level("INFO", logger="hippocampus.model")
        svc = start_service(cfg)
        snap = wait_for(lambda: requests.get(svc.url + "/status", timeout=10).json().get("model_lifecycle"),
                        timeout=10, what="the lifecycle's snapshot")
        assert snap["started_by_us"] is False and snap["pid"] is None, snap
        said = " ".join(r.getMessage() for r in caplog.records)
        assert f"pid {other.pid}" in said and "left alone" in said, said
        svc.request_stop(drain_seconds=5)
        assert svc.wait_stopped(30)
        assert other.poll() is None, "the service stopped a process that was not its model server"
        assert json.loads((folder / "state.json").read_text())["lifecycle"]["pid"] is None
    finally:
        other.kill()
        other.wait(5)


# ---------------------------------------------------------------- a `replays` link

def test_a_replays_link_never_lets_the_service_trim_the_files_it_points_to(make_config, start_service, hand,
                                                                         fake_model, tmp_path, caplog):
    from tests.contract.test_replay import scripted, seed

    elsewhere = tmp_path / "person" / "documents"
    elsewhere.mkdir(parents=True)
    for i in range(320):
        p = elsewhere / f"note-{i:03d}.json"
        p.write_text(json.dumps({"mine": i}), encoding="utf-8")
        os.utime(p, (1_000_000 + i, 1_000_000 + i))          # older than any packet: the trim's first picks
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    fake_model.responder = scripted
    cfg = make_config(model={"url": fake_model.url})
    folder = cfg.sleep.resolved_state_path().parent
    folder.mkdir(mode=0o700)
    (folder / "replays").symlink_to(elsewhere, target_is_directory=True)
    caplog.set_level("INFO", logger="hippocampus")
    svc = start_service(cfg)
    seed(hand, ("tea", "garden"))
    requests.post(svc.url + "/nudge", timeout=5)
    wait_for(lambda: hand.drafts("pending"), timeout=20, what="the first draft")
    wait_for(lambda: len(list(elsewhere.iterdir())) != 320 or any(
        "is a link" in r.getMessage() for r in caplog.records), timeout=10, what="the packet's save")
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before      # all 320 there, unchanged
