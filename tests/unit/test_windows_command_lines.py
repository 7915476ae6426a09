"""A one-string command on Windows (ripple.command, model.lifecycle.start and server_args, --ripple-command) is
split by Windows' own rule, everywhere: double quotes group a word and are removed, backslashes are kept, so
`"C:\\Program Files\\x\\main.exe" --wake` is the program C:\\Program Files\\x\\main.exe, which Windows can start.
Tested here on Linux by forcing the Windows branch of each place that splits one."""
from __future__ import annotations

import subprocess
import sys
import time

import psutil

import pytest

from hippocampus import config as cm
from hippocampus.cli.flags import _apply_ripple
from hippocampus.config.schema import LifecycleConfig, ModelConfig, RippleConfig
from hippocampus.model import process
from hippocampus.model.lifecycle import ModelLifecycle
from hippocampus.clock import Clock
from hippocampus.ripple.fire import argv_of

LINE = r'"C:\Program Files\x\main.exe" --wake -p "{message}"'
WANT = [r"C:\Program Files\x\main.exe", "--wake", "-p", "{message}"]


@pytest.fixture
def windows(monkeypatch):
    """The Windows branch of every place that splits a command string, on this machine."""
    monkeypatch.setattr(process, "WINDOWS", True)
    monkeypatch.setattr("hippocampus.config.loader.os", type("os", (), {"name": "nt"}))
    monkeypatch.setattr("hippocampus.cli.flags.os", type("os", (), {"name": "nt"}))


def test_ripple_command_in_the_yaml_names_the_program_without_its_quotes(windows):
    cfg = cm.build({"memory": {"url": "http://127.0.0.1:9"}, "ripple": {"type": "command", "command": LINE}},
                   environ={})
    assert cfg.ripple.command == WANT
    assert argv_of(RippleConfig(type="command", command=LINE), windows=True) == WANT


def test_the_ripple_command_flag_names_the_program_without_its_quotes(windows):
    put = {}
    _apply_ripple(RippleConfig(type="command"), {"ripple_command": LINE}, put.__setitem__, lambda said: None)
    assert put["ripple.command"] == WANT


def test_server_args_keep_a_quoted_path_whole(windows, tmp_path):
    server, model = tmp_path / "llama-server", tmp_path / "m.gguf"
    server.write_text("")
    model.write_text("")
    lc = LifecycleConfig(server=str(server), model_path=str(model),
                         server_args=r'-ngl 99 --lora "C:\Users\me\my loras\a.gguf"')
    life = ModelLifecycle(ModelConfig(url="http://127.0.0.1:9/v1", lifecycle=lc), state_dir=tmp_path,
                          clock=Clock(), emit=lambda *a, **k: {})
    assert life.built_command()[-4:] == ["-ngl", "99", "--lora", r"C:\Users\me\my loras\a.gguf"]


def test_a_running_start_command_is_recognised_by_its_quoted_program(windows):
    """model.lifecycle.start with a quoted program: the process it started is known as its own."""
    code = "import sys; sys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10             # until the child has exec'd (its command line is its own)
        while code not in psutil.Process(child.pid).cmdline() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert process.runs_command(child.pid, f'"{sys.executable}" -c "{code}"')
        assert not process.runs_command(child.pid, f'"{sys.executable}" -c "print(1)"')
    finally:
        child.stdin.close()
        child.wait(10)


@pytest.mark.parametrize("line,words", [
    (r'C:\tools\main.exe --dir C:\a\b\ --x', [r"C:\tools\main.exe", "--dir", "C:\\a\\b\\", "--x"]),
    (r'"C:\a b\c.exe" "say \"hi\"" x', [r"C:\a b\c.exe", 'say "hi"', "x"]),
    (r'a "C:\dir with space\\" b', ["a", "C:\\dir with space\\", "b"]),
    (r'a""b "" c', ["ab", "", "c"]),
    ("  spaced\t out  ", ["spaced", "out"]),
])
def test_the_windows_rule(line, words):
    from hippocampus.cmdline import split
    assert split(line, windows=True) == words


def test_an_unclosed_quote_is_refused_on_windows_too():
    from hippocampus.cmdline import split
    with pytest.raises(ValueError, match="closing quotation"):
        split(r'"C:\Program Files\x\main.exe --wake', windows=True)


def test_an_unclosed_quote_in_the_start_command_is_said_on_windows_before_anything_is_launched(windows, tmp_path,
                                                                                                 monkeypatch):
    from hippocampus.model.client import ModelUnavailable
    launched = []
    monkeypatch.setattr(process, "launch", lambda *a, **k: launched.append(a) or pytest.fail("launched"))
    lc = LifecycleConfig(start=r'"C:\Program Files\x\main.exe --port 8080')
    life = ModelLifecycle(ModelConfig(url="http://127.0.0.1:9/v1", lifecycle=lc), state_dir=tmp_path,
                          clock=Clock(), emit=lambda *a, **k: {})
    with pytest.raises(ModelUnavailable, match="model.lifecycle.start cannot be read as a command line.*close its"):
        life._launch_command()
    assert launched == []
