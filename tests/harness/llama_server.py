"""The real llama-server as a subprocess on a free loopback port, for the tests that need the real thing.

    srv = LlamaServer(binary, model, "-c", "2048").start()     # waits (deadline-polled) for /health 200
    requests.post(srv.url + "/v1/chat/completions", json=...)
    code, seconds = srv.stop()                                 # SIGTERM, a bounded wait, then SIGKILL

Every server started here is remembered until stopped, and `stop_all()` (the session's finalizer) kills
whatever is left, so a failing test never leaves a llama-server behind. The server's output goes to a log
file whose tail is quoted when it fails to start.

`unavailable()` says why the real server cannot run here (no binary and it cannot be built, no AVX2), for
the skips; $SEREN_LLAMA_SERVER points the tests at another binary (a later llama.cpp, say).
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional

import requests

from tests.harness.ports import free_port
from tests.harness import llama_build

BUILD_HINT = ("build it once with `python -m tests.harness.llama_build` (about 11 minutes on 2 cores; "
              "cached under ~/.cache/seren-hippocampus)")
_running: "set[LlamaServer]" = set()


def binary() -> Path:
    env = os.environ.get("SEREN_LLAMA_SERVER")
    return Path(env) if env else llama_build.binary_path()


def unavailable() -> Optional[str]:
    """Why the real llama-server cannot run here, or None when the binary is ready."""
    path = binary()
    if os.environ.get("SEREN_LLAMA_SERVER") and not os.access(path, os.X_OK):
        return f"SEREN_LLAMA_SERVER={path} is not an executable file"
    reason = llama_build.why_not()
    if reason and "AVX2" in reason:
        return reason
    if path.exists():
        return None
    if reason:
        return f"llama-server is not built and cannot be built here: {reason}"
    return f"llama-server is not built yet ({path} is missing): {BUILD_HINT}"


class LlamaServer:
    def __init__(self, binary_path: Path, model: Path, *args: str, threads: int = 1, log_dir: Path | None = None):
        self.binary = Path(binary_path)
        self.model = Path(model)
        self.args = list(args)
        self.threads = threads
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="llama-server-"))
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0
        self.log_path = self.log_dir / "llama-server.log"
        self.started_at = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the server was not started"
        return self.proc.pid

    def command(self) -> list[str]:
        cmd = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
               "-t", str(self.threads), *self.args]
        if "-np" not in self.args and "--parallel" not in self.args:
            cmd += ["-np", "1"]
        return cmd

    def spawn(self) -> "LlamaServer":
        """Start the process and return at once, without waiting for the model to load."""
        self.port = free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.started_at = time.monotonic()
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        _running.add(self)
        return self

    def start(self, timeout: float = 60.0) -> "LlamaServer":
        """Start the process and wait for /health 200; a port another process took is retried. A server that
        does not get ready is stopped before the error is raised."""
        for attempt in range(3):
            self.spawn()
            try:
                self.wait_ready(timeout)
                return self
            except BaseException:
                lost_port = self.proc.poll() is not None and "couldn't bind" in self.log_tail()
                self.stop()
                if not lost_port or attempt == 2:
                    raise
        return self

    def health(self) -> Optional[requests.Response]:
        """GET /health, or None while nothing answers on the port yet."""
        try:
            return requests.get(self.url + "/health", timeout=2)
        except requests.RequestException:
            return None

    def wait_ready(self, timeout: float = 60.0) -> list[requests.Response]:
        """Poll /health until 200 (deadline-polled); returns every answer seen, the 503s included."""
        deadline = time.monotonic() + timeout
        seen: list[requests.Response] = []
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                raise RuntimeError(f"llama-server exited with {code} before it was ready; "
                                   f"the end of its log:\n{self.log_tail()}")
            answer = self.health()
            if answer is not None:
                seen.append(answer)
                if answer.status_code == 200:
                    return seen
            time.sleep(0.01)
        raise RuntimeError(f"llama-server did not answer /health 200 within {timeout} s; "
                           f"the end of its log:\n{self.log_tail()}")

    def stop(self, timeout: float = 5.0) -> tuple[Optional[int], float]:
        """SIGTERM, wait up to timeout, then SIGKILL. Returns (exit code, seconds from SIGTERM to exit)."""
        _running.discard(self)
        if self.proc is None:
            return None, 0.0
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        began = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(5)
        return code, time.monotonic() - began

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def stop_all() -> None:
    """Kill every server this process started and has not stopped: the session's last word."""
    for srv in list(_running):
        srv.stop(timeout=2)
