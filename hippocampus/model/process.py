"""The small model's server as a process: launch it under its watchdog, tell whether it still runs, stop it.

watchdog.py stops the server when the pipe from this process closes, so a service killed with -9 leaves no
server behind. The pipes live here (_WATCHED), so an actor restart adopts its server with the pipe intact,
while a server a previous run recorded is stopped, not adopted. The start time guards against a recycled pid:
on Linux the boot's id and the seconds from boot to the start (/proc), which no clock adjustment moves (psutil's
create time is the whole-second boot time plus those seconds, so an NTP step or slew across a second, or a Jetson
setting its clock after boot, moved it, and the service took its own server for another's and left it running);
elsewhere the create time, which the system keeps as it was. A record from the state file is only a claim
(lifecycle.py adopts a pid only when runs_command() says it runs the configured command and the model's health
URL answers).
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import psutil

from hippocampus import cmdline

log = logging.getLogger(__name__)

WINDOWS = os.name == "nt"
SAME_START = 0.05           # seconds: two reads of one process's create time agree closer than this
WATCHDOG = Path(__file__).with_name("watchdog.py")
_WATCHED: dict = {}         # server pid -> its watchdog's Popen (whose stdin is the pipe that keeps it up)
_DETACHED = ({"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW}  # type: ignore
             if WINDOWS else {"start_new_session": True})


class LaunchFailed(OSError):
    """The watchdog could not start the server (and said why)."""


def log_tail(path: Path, offset: int, n: int = 10) -> str:
    """The last lines of model.log written since `offset` (this launch's), for a failure's message."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()[-32768:]
    except OSError:
        return ""
    lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()][-n:]
    return ("; model.log ends:\n" + "\n".join(lines)) if lines else ""


def port_taken(health_url: str, status: int, model_url: str) -> str:
    """Why no server is launched on a port that answers, not as the model's server does (200, or 503 loading):
    a second server would not bind it."""
    return (f"{health_url} answers HTTP {status}: what holds the port of model.url ({model_url}) is not the "
            "model's server, so none was launched on it; free that port, or set model.url to a free one (or, if "
            "it is the model's server, set model.lifecycle.health_url to its health route)")


def since_boot(pid: int) -> Optional[list]:
    """[this boot's id, seconds from boot to the process's start] where /proc says (Linux), else None."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])    # field 22: starttime
        return [boot, ticks / os.sysconf("SC_CLK_TCK")]
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def split_command(line: str) -> Any:
    """A command line for Popen: whole on Windows (CreateProcess reads it by cmdline's rule; an unclosed quote is
    refused here, as elsewhere), shlex-split elsewhere."""
    words = cmdline.split(line, windows=WINDOWS)
    return line if WINDOWS else words


def _read(pid: int, what: str, default: Any = None) -> Any:
    """psutil's `what` of process `pid` (its create_time, its cmdline), or `default` when it cannot be read."""
    with contextlib.suppress(psutil.Error, OSError):
        return getattr(psutil.Process(pid), what)()
    return default


@dataclass
class ServerProcess:
    """A server we launched (popen: its watchdog) or took back after a restart."""
    pid: int
    created: Optional[float]
    popen: Optional[subprocess.Popen] = None
    watchdog: Optional[int] = None      # the watchdog's pid
    booted: Optional[list] = None       # since_boot(pid) at launch (Linux)

    def alive(self) -> bool:
        if self.popen is not None:
            self.popen.poll()               # reap the watchdog once it is done
        return self._process() is not None

    def exit_code(self) -> Optional[int]:
        """The server's exit code, as its watchdog passes it on."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.popen.wait(timeout=2) if self.popen is not None else None
        return None

    def _process(self) -> Optional[psutil.Process]:
        """The live process, only while it is the one we started."""
        try:
            p = psutil.Process(self.pid)
            now = since_boot(self.pid) if self.booted else None
            if now is not None and (now[0] != self.booted[0] or abs(now[1] - self.booted[1]) > SAME_START):
                return None                     # another boot's, or the pid was recycled: not ours
            if now is None and self.created is not None and abs(p.create_time() - self.created) > SAME_START:
                return None                     # the pid was recycled: not ours
            return p if p.status() != psutil.STATUS_ZOMBIE else None
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            return None

    def record(self) -> dict:
        return {"pid": self.pid, "created": self.created, "watchdog": self.watchdog, "booted": self.booted}

    def stop(self, grace_seconds: float, kill_seconds: float = 10.0, stopped: Callable[[], bool] = lambda: False) \
            -> bool:
        """Terminate the process and every process under it; kill what is still there after the grace (or once
        stopped() says the service stops). False when some of it outlived the kill by kill_seconds."""
        alive: list = []
        p = self._process()
        if p is not None:
            alive, until = _tree(p), time.monotonic() + grace_seconds
            _each(alive, "terminate")
            while alive and time.monotonic() < until and not stopped():
                _, alive = psutil.wait_procs(alive, timeout=max(0.0, min(0.1, until - time.monotonic())))
            if alive:
                log.warning("model lifecycle: pid %s ignored the stop for %g s; killing it", self.pid, grace_seconds)
                _each(alive, "kill")
                _, alive = psutil.wait_procs(alive, timeout=kill_seconds)
        self._reap()
        return not alive

    def kill_leftovers(self) -> None:
        """What a server that already exited left running under it."""
        p = self._process()
        if p is not None:
            _each(_tree(p), "kill")
        self._reap()

    def _reap(self) -> None:
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=1)
        self.let_go()

    def let_go(self) -> None:
        """Close the pipe to the watchdog (which then stops the server, if it still runs)."""
        dog = _WATCHED.pop(self.pid, None) or self.popen
        if dog is not None and dog.stdin is not None:
            with contextlib.suppress(OSError):
                dog.stdin.close()


def _tree(p: psutil.Process) -> list:
    try:
        return [p] + p.children(recursive=True)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return [p]


def _each(procs: list, verb: str) -> None:
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            getattr(p, verb)()


def launch(cmd: Any, log_path: Path, cwd: Optional[str], grace_seconds: float = 10.0) -> ServerProcess:
    """Start the server under its watchdog, detached, its output appended to log_path."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    whole = isinstance(cmd, str)
    argv = [sys.executable, "-I", str(WATCHDOG), f"{grace_seconds:g}", "--line" if whole else "--",
            *([cmd] if whole else cmd)]
    with open(log_path, "ab") as out:
        dog = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=out, cwd=cwd, **_DETACHED)
    with dog.stdout:
        said = dog.stdout.readline().decode("utf-8", "replace").strip()
    if not said.isdigit():
        dog.stdin.close()
        dog.wait(10)
        raise LaunchFailed(said or f"the server's watchdog exited with code {dog.returncode} before starting it")
    pid = int(said)
    _WATCHED[pid] = dog
    return ServerProcess(pid, _read(pid, "create_time"), dog, dog.pid, since_boot(pid))


def adopt(record: dict, grace_seconds: float = 10.0, stopped: Callable[[], bool] = lambda: False) \
        -> Optional[ServerProcess]:
    """The server this service started, if that very process still runs and its watchdog's pipe is ours; one a
    dead run launched is stopped instead. A record with no create time is matched by its command line."""
    pid = record.get("pid")
    if not pid:
        return None
    dog = _WATCHED.get(int(pid))
    booted = record.get("booted")           # the state file is only a claim: a malformed one is not read
    well_formed = isinstance(booted, list) and len(booted) == 2 and isinstance(booted[0], str) and \
        isinstance(booted[1], (int, float)) and not isinstance(booted[1], bool)
    proc = ServerProcess(int(pid), record.get("created"), dog, record.get("watchdog"), booted if well_formed else None)
    if record.get("created") is None and dog is None and not _command_matches(int(pid), record.get("cmd")):
        return None
    if not proc.alive():
        return None
    if proc.watchdog is not None and dog is None:
        log.info("model lifecycle: the server a previous run started (pid %s) outlived that run; stopping it "
                 "(its watchdog is too): the next model call starts a fresh one", pid)
        proc.stop(grace_seconds, stopped=stopped)
        return None
    return proc


def runs_command(pid: int, cmd: Any) -> bool:
    """Whether process `pid` runs the command `cmd` (the configured one): its command line is `cmd`, ends with
    it (a script run by its interpreter), or, for a command with arguments, ends with those arguments (a
    wrapper script that execs the server with "$@"). A process of another command never matches."""
    running = [str(w) for w in _read(pid, "cmdline", [])]
    wanted = [str(w) for w in (cmdline.split(cmd, windows=WINDOWS) if isinstance(cmd, str) else cmd or [])]
    if WINDOWS:
        wanted, running = [w.strip('"').lower() for w in wanted], [w.strip('"').lower() for w in running]
    if not wanted or not running:
        return False
    ends = lambda tail: len(tail) <= len(running) and running[len(running) - len(tail):] == tail  # noqa: E731
    return ends(wanted) or (len(wanted) > 1 and ends(wanted[1:]))


def _command_matches(pid: int, cmd: Any) -> bool:
    words = {os.path.basename(w) for w in _read(pid, "cmdline", []) if w}
    saved = cmd if isinstance(cmd, list) else str(cmd or "").split()
    wanted = [os.path.basename(str(w)) for w in saved if len(str(w)) > 2 and not str(w).startswith("-")]
    return bool(wanted) and any(w in words for w in wanted)


def run_stop_command(line: str, log_path: Path, cwd: Optional[str], timeout: float = 60,
                     stopped: Callable[[], bool] = lambda: False) -> bool:
    """The configured stop command, its output to the model log: True once it has ended; False when `timeout`
    passed or stopped() said so first (it is killed, with what it started)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        run = subprocess.Popen(split_command(line), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               cwd=cwd, **_DETACHED)
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            run.wait(timeout=max(0.0, min(0.1, deadline - time.monotonic())))
            return True
        if stopped() or time.monotonic() >= deadline:
            with contextlib.suppress(OSError):
                run.kill() if WINDOWS else os.killpg(run.pid, signal.SIGKILL)
            run.wait()
            return False
