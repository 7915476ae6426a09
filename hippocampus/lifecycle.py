"""The small model, on only when needed: start it, keep it warm, stop what we started.

A plain object with no threads of its own. ensure() before every model call,
release() after it, tick() on each scheduler turn, handover() before the main
model is poked, shutdown() on exit, adopt() on a (re)start. A server that was
answering before we tried to start one is borrowed and never stopped.
"""
from __future__ import annotations

import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional
from urllib.parse import urlsplit

import requests

from .clock import Clock
from .config import ModelConfig
from .model import ModelUnavailable

log = logging.getLogger("hippocampus.lifecycle")

HOLDER = "seren-hippocampus"
_WINDOWS = os.name == "nt"
_CLEARED = {"pid": None, "started_by_us": False, "cmd": None, "how": None}


def _split(line: str) -> Any:
    """A command line for Popen: whole on Windows, shlex-split elsewhere."""
    return line if _WINDOWS else shlex.split(line)


def _detach() -> dict:
    """Popen kwargs that put the server in its own process group, with no window."""
    if _WINDOWS:
        flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW  # type: ignore[attr-defined]
        return {"creationflags": flags}
    return {"start_new_session": True}


def _pid_alive(pid: int) -> bool:
    if _WINDOWS:
        return _win_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:  # ProcessLookupError and the rest
        return False
    try:  # a zombie is gone for our purposes
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _win_pid_alive(pid: int) -> bool:  # pragma: no cover - Windows only
    import ctypes
    k32, code = ctypes.windll.kernel32, ctypes.c_ulong()  # type: ignore[attr-defined]
    handle = k32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    ok = bool(handle) and k32.GetExitCodeProcess(handle, ctypes.byref(code))
    if handle:
        k32.CloseHandle(handle)
    return bool(ok) and code.value == 259  # STILL_ACTIVE


def _signal_group(pid: int, proc: Optional[subprocess.Popen], hard: bool) -> None:
    """SIGTERM (or SIGKILL) our process group; on Windows terminate the process (tree)."""
    if _WINDOWS:  # pragma: no cover - Windows only
        if proc is not None:
            proc.kill() if hard else proc.terminate()
        else:
            subprocess.run(["taskkill", "/PID", str(pid), "/T"] + (["/F"] if hard else []),
                           capture_output=True, timeout=30)
        return
    try:
        os.killpg(pid, signal.SIGKILL if hard else signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass


def _looks_like_ours(pid: int, cmd: Any) -> bool:
    """Guard against a recycled pid: our server leads its own group and its command line matches."""
    if _WINDOWS:  # pragma: no cover
        return True
    try:
        if os.getpgid(pid) != pid:
            return False
        running = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # gone, or no /proc: the group check is all we have
        return os.path.exists(f"/proc/{pid}") or not os.path.isdir("/proc")
    words = {os.path.basename(w.decode(errors="replace")) for w in running if w}
    saved = cmd if isinstance(cmd, list) else str(cmd or "").split()
    wanted = [os.path.basename(str(w)) for w in saved if len(str(w)) > 2 and not str(w).startswith("-")]
    return not wanted or any(w in words for w in wanted)


def _quietly(fn: Callable, *a: Any, **kw: Any) -> None:  # save and emit must not break the lifecycle
    try:
        fn(*a, **kw)
    except Exception as exc:  # noqa: BLE001
        log.warning("model lifecycle: %s failed: %s: %s", getattr(fn, "__name__", fn), type(exc).__name__, exc)


class ModelLifecycle:
    def __init__(self, model_cfg: ModelConfig, *, state_dir: Path, clock: Clock,
                 emit: Callable[..., dict], persisted: Optional[dict] = None,
                 save: Callable[[dict], None] = lambda d: None,
                 sleep: Callable[[float], None] = time.sleep):
        self.cfg, self.lc = model_cfg, model_cfg.lifecycle
        self.state_dir = Path(state_dir)
        self.log_path = self.state_dir / "model.log"
        self._clock, self._sleep = clock, sleep
        self._emit = lambda kind, **fields: _quietly(emit, kind, **fields)
        self._save = lambda d: _quietly(save, d)
        self._persisted = dict(persisted or {})
        self._lock = threading.RLock()
        self.state, self.started_by_us, self.last_error = "stopped", False, ""
        self.pid: Optional[int] = None
        self._proc: Optional[subprocess.Popen] = None  # None for an adopted server: a bare pid
        self._how: Optional[str] = None  # "command" or "observatory"
        self._launched_at: Optional[float] = None  # clock time, for up_seconds_total
        self._log_offset = 0  # where this launch's lines start in model.log
        self.last_used: Optional[float] = None  # clock time of the last ensure() or release()
        self.last_failure: Optional[float] = None
        self.up_seconds_total = self.busy_seconds_total = 0.0

    @property
    def health_url(self) -> str:
        base = self.cfg.url.rstrip("/")
        return self.lc.health_url or (base[:-3] if base.endswith("/v1") else base) + "/health"

    def healthy(self) -> bool:
        return self._probe() == 200

    def _probe(self):
        """The health check's status code, or None when nothing answers."""
        try:
            return requests.get(self.health_url, timeout=3).status_code
        except requests.RequestException:
            return None

    def ensure(self) -> None:
        with self._lock:
            self.last_used = now = self._clock.now()
            status = self._probe()
            if status is not None and status != 200 and not self.lc.managed and status != 503:
                self.state = "ready"   # an unmanaged server that answers but has no /health route
                return
            if status == 200:
                if self.started_by_us and self._how == "command" and not self._alive():
                    self._forget()  # ours died: whatever answers now is someone else's
                self.state, self.last_failure, self.last_error = "ready", None, ""
                return
            if not self.lc.managed:
                self.state = "stopped"
                raise ModelUnavailable(
                    f"the model at {self.cfg.url} is not answering ({self.health_url}) and model.lifecycle.manage "
                    "is off: start it by hand, or name model.lifecycle.server + model_path (or a start line)")
            if self.last_failure is not None and now - self.last_failure < self.lc.retry_after_seconds:
                ago, left = now - self.last_failure, self.lc.retry_after_seconds - (now - self.last_failure)
                raise ModelUnavailable(
                    f"the model failed to start {ago:.0f} s ago ({self.last_error}); "
                    f"the next attempt is in {left:.0f} s (model.lifecycle.retry_after_seconds)")
            self._start()

    def release(self, busy_seconds: float) -> None:
        self.last_used = self._clock.now()
        self.busy_seconds_total += max(0.0, float(busy_seconds or 0.0))

    def tick(self, chain_open: bool) -> None:
        with self._lock:
            if not self.started_by_us:
                return
            if not chain_open:
                self.stop_now("the cycle is over")
                return
            now = self._clock.now()
            idle = now - (self.last_used if self.last_used is not None else (self._launched_at or now))
            if idle >= self.lc.keep_warm_seconds:
                self._stop(idle_seconds=round(idle, 1))

    def handover(self) -> bool:
        return bool(self.lc.handover and self.started_by_us) and self.stop_now("handing over to the main model")

    def stop_now(self, why: str) -> bool:
        with self._lock:
            if not self.started_by_us:
                return False
            self._stop(why=why)
            return True

    def shutdown(self) -> None:
        self.stop_now("the service is shutting down")

    def adopt(self) -> None:
        """Take back a server a previous run of this service started, or forget it if it is gone."""
        with self._lock:
            p, self._persisted = self._persisted, {}
            if not p.get("started_by_us"):
                return
            pid, how = p.get("pid"), p.get("how") or "command"
            if how == "observatory" and self.lc.via_observatory:
                alive = self.healthy()
            else:
                alive = bool(pid) and _pid_alive(int(pid)) and _looks_like_ours(int(pid), p.get("cmd"))
            if not alive:
                log.info("model lifecycle: the server a previous run started (pid %s) is gone", pid)
                self._save(dict(_CLEARED))
                return
            self.pid, self._proc, self._how = (int(pid) if pid else None), None, how
            self.started_by_us = True
            self._launched_at = self.last_used = self._clock.now()
            self.state = "ready" if self.healthy() else "starting"
            log.info("model lifecycle: adopted the server a previous run started (pid %s)", pid)

    def snapshot(self) -> dict:
        via = ("observatory" if self.lc.via_observatory else "local") if self.lc.managed else None
        up = self.up_seconds_total
        if self.started_by_us and self._launched_at is not None:
            up += max(0.0, self._clock.now() - self._launched_at)
        return {"managed": self.lc.managed, "via": via, "state": self.state,
                "started_by_us": self.started_by_us, "pid": self.pid, "health_url": self.health_url,
                "last_used": self.last_used, "keep_warm_seconds": self.lc.keep_warm_seconds,
                "up_seconds_total": round(up, 1), "busy_seconds_total": round(self.busy_seconds_total, 1),
                "last_error": self.last_error}

    def built_command(self) -> list:
        server, model = os.path.expanduser(self.lc.server), os.path.expanduser(self.lc.model_path)
        if not os.path.isfile(server):
            raise FileNotFoundError(f"model.lifecycle.server not found: {server}")
        if not os.path.isfile(model):
            raise FileNotFoundError(f"model.lifecycle.model_path not found: {model}")
        u = urlsplit(self.cfg.url)
        port = u.port or (443 if u.scheme == "https" else 80)
        return [server, "-m", model, "--host", u.hostname or "127.0.0.1", "--port", str(port),
                *shlex.split(self.lc.server_args, posix=not _WINDOWS)]

    def _start(self) -> None:
        self.state, t0 = "starting", time.monotonic()
        if self.lc.via_observatory:
            self._launch_observatory()
        elif not (self.started_by_us and self._alive()):
            self._forget()  # a server of ours that died (or was never there)
            self._launch_command()
        self._wait_ready(t0, t0 + self.lc.ready_timeout_seconds)

    def _launch_command(self) -> None:
        try:
            cmd = _split(self.lc.start) if self.lc.start else self.built_command()
        except FileNotFoundError as exc:
            self._fail(str(exc))
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            with open(self.log_path, "ab") as out:
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=os.path.expanduser(self.lc.cwd) if self.lc.cwd else None,
                                        **_detach())
        except Exception as exc:  # noqa: BLE001 - any launch error fails the start
            self._fail(f"start failed: {type(exc).__name__}: {exc}")
        self._proc, self.pid, self._how, self.started_by_us = proc, proc.pid, "command", True
        self._launched_at = self._clock.now()
        self._save({"pid": proc.pid, "started_by_us": True, "cmd": cmd, "how": "command"})
        log.info("model lifecycle: launched the model server (pid %s): %s", proc.pid, cmd)

    def _launch_observatory(self) -> None:
        body = {"holder": HOLDER, "reason": "a sleep or a redraft needs the drafting model",
                "wait_seconds": self.lc.ready_timeout_seconds}
        try:
            data = self._observatory("ensure", body, timeout=self.lc.ready_timeout_seconds + 90)
        except Exception as exc:  # noqa: BLE001
            self._fail(f"the Observatory could not start {self.lc.observatory_service}: {exc}")
        if not data.get("ok") or not data.get("ready"):
            self._fail(f"the Observatory could not start {self.lc.observatory_service}: "
                       f"{data.get('error') or 'it did not report ready'}")
        self._how, self.pid, self._proc = "observatory", None, None
        self.started_by_us = bool(data.get("started"))  # already_running: borrowed, never stopped
        if self.started_by_us:
            self._launched_at = self._clock.now()
            self._save({"pid": None, "started_by_us": True, "cmd": None, "how": "observatory"})

    def _observatory(self, verb: str, body: dict, timeout: float) -> dict:
        from seren_meninges.credentials import resolve_token

        token = resolve_token(inline=self.lc.observatory_token or None,
                              keyring_ref=self.lc.observatory_token_keyring or None,
                              env_var=self.lc.observatory_token_env or None)
        url = f"{self.lc.observatory_url.rstrip('/')}/api/v1/service/{self.lc.observatory_service}/{verb}"
        resp = requests.post(url, json=body, timeout=timeout,
                             headers={"Authorization": f"Bearer {token}"} if token else {})
        try:
            data = resp.json()
        except ValueError:
            data = None
        data = data if isinstance(data, dict) else {}
        if resp.status_code >= 400 or not data:
            detail = data.get("error") or data.get("detail") or resp.text[:200]
            raise RuntimeError(f"HTTP {resp.status_code} from {url}: {detail}")
        return data

    def _wait_ready(self, t0: float, deadline: float) -> None:
        # poll soon after the launch and back off to poll_seconds, a tenth of the time waited so far: a
        # server ready in 1 s is seen within a tenth of a second, not at the first 2 s poll (up, unused)
        while True:
            if self.healthy():
                self.state, self.last_failure, self.last_error = "ready", None, ""
                if self.started_by_us:
                    self._emit("model_started", how=self._how, seconds=round(time.monotonic() - t0, 1),
                               url=self.cfg.url)
                return
            if self._how == "command" and not self._alive():
                code = self._proc.poll() if self._proc is not None else None
                if self.pid and not _WINDOWS:
                    _signal_group(self.pid, None, hard=True)  # anything it left in its group
                self._forget()
                self._fail(f"the start command exited with code {'?' if code is None else code} "
                           "before the model answered" + self._log_tail())
            if time.monotonic() >= deadline:
                tail = self._log_tail() if self._how == "command" else ""
                if self.started_by_us:
                    self._stop_quietly()
                    self._forget()
                self._fail(f"the model did not answer {self.health_url} within "
                           f"{self.lc.ready_timeout_seconds:g} s" + tail)
            step = min(self.lc.poll_seconds, max(0.05, (time.monotonic() - t0) / 10))
            self._sleep(max(0.0, min(step, deadline - time.monotonic())))

    def _fail(self, why: str) -> NoReturn:
        self.state, self.last_failure, self.last_error = "failed", self._clock.now(), why
        log.warning("model lifecycle: %s", why)
        self._emit("model_start_failed", error=why)
        raise ModelUnavailable(why)

    def _log_tail(self, n: int = 10) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                data = f.read()[-32768:]
        except OSError:
            return ""
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()][-n:]
        return ("; model.log ends:\n" + "\n".join(lines)) if lines else ""

    def _alive(self) -> bool:
        return self._proc.poll() is None if self._proc is not None else bool(self.pid) and _pid_alive(self.pid)

    def _stop(self, why: Optional[str] = None, idle_seconds: Optional[float] = None) -> None:
        self.state, how = "stopping", self._how
        self._stop_quietly()
        up = self._forget()
        self.state = "stopped"
        extra = {k: v for k, v in (("why", why), ("idle_seconds", idle_seconds)) if v is not None}
        self._emit("model_stopped", how=how, up_seconds=round(up, 1), **extra)

    def _stop_quietly(self) -> None:
        """The stop command, else our own process group, else the Observatory. Never raises."""
        try:
            if self.lc.stop:
                self.state_dir.mkdir(parents=True, exist_ok=True)
                with open(self.log_path, "ab") as out:
                    subprocess.run(_split(self.lc.stop), stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, timeout=60,
                                   cwd=os.path.expanduser(self.lc.cwd) if self.lc.cwd else None)
            elif self._how == "observatory":
                self._observatory("stop", {"holder": HOLDER, "reason": "done drafting"}, timeout=60)
        except Exception as exc:  # noqa: BLE001 - stopping never raises
            log.warning("model lifecycle: the stop failed: %s: %s", type(exc).__name__, exc)
        try:
            if self.pid:  # what the stop command left running, or our process when there is none
                self._terminate()
        except Exception as exc:  # noqa: BLE001
            log.warning("model lifecycle: could not stop pid %s: %s: %s", self.pid, type(exc).__name__, exc)

    def _terminate(self) -> None:
        pid, proc = self.pid, self._proc
        if pid and self._alive():
            _signal_group(pid, proc, hard=False)
            if not self._gone_within(self.lc.stop_grace_seconds):
                log.warning("model lifecycle: pid %s ignored the stop for %g s; killing it",
                            pid, self.lc.stop_grace_seconds)
                _signal_group(pid, proc, hard=True)
                self._gone_within(10.0)
            if not _WINDOWS:
                _signal_group(pid, None, hard=True)  # nothing of ours stays behind in the group

    def _gone_within(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while self._alive() and time.monotonic() < deadline:
            self._sleep(0.05)
        return not self._alive()

    def _forget(self) -> float:
        """Drop our hold on the server; returns how long it was up."""
        up = 0.0 if self._launched_at is None else max(0.0, self._clock.now() - self._launched_at)
        self.up_seconds_total += up
        had = self.started_by_us or self.pid is not None
        self.pid, self._proc, self._launched_at, self.started_by_us = None, None, None, False
        if had:
            self._save(dict(_CLEARED))
        return up
