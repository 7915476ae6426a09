"""The small model, on only when needed: when to start it, keep it warm, hand it over and stop it.

A server that was answering before we tried to start one is borrowed and never stopped; one answering 503
(still loading) is waited for, then borrowed: never a second launch on its port. process.py runs the server
from a command line; a node's Observatory runs it as a registered service (observatory.py).
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional
from urllib.parse import urlsplit

import requests

from hippocampus import cmdline
from hippocampus import outbound, transport_words
from hippocampus.clock import Clock
from hippocampus.config import ModelConfig, redact
from hippocampus.model.client import ModelUnavailable
from hippocampus.model.fit import server_root
from hippocampus.model.observatory import ensure_failed, names, record, stop_left_behind, unless_stopped
from hippocampus.model.stop import stop_given_up, stop_left_at_exit, stop_quietly
from hippocampus.store import private


def procs():
    """model/process.py (and psutil), imported only when a model is managed."""
    from hippocampus.model import process

    return process


log = logging.getLogger(__name__)
STOP_CHECK_SECONDS = 0.1    # how often a wait for the model to load looks for a stop
LOADING_STOPPED = "stopped while the model was loading: the service is stopping, so the start was given up"
NOT_STARTED = "the service is stopping: the model server is not started"
STOPPED, STARTING, READY, STOPPING, FAILED = "stopped", "starting", "ready", "stopping", "failed"
_CLEARED = {"pid": None, "created": None, "booted": None, "started_by_us": False, "cmd": None, "how": None}


def _quietly(fn: Callable, *a: Any, **kw: Any) -> None:
    try:
        fn(*a, **kw)
    except Exception as exc:  # noqa: BLE001
        log.warning("model lifecycle: %s failed: %s: %s", getattr(fn, "__name__", fn), type(exc).__name__, exc)


class ModelLifecycle:
    def __init__(self, model_cfg: ModelConfig, *, state_dir: Path, clock: Clock,
                 emit: Callable[..., dict], persisted: Optional[dict] = None,
                 save: Callable[[dict], None] = lambda d: None, stopping: Callable[[], bool] = lambda: False):
        self.cfg, self.lc = model_cfg, model_cfg.lifecycle
        self.log_path = Path(state_dir) / "model.log"
        self._clock = clock
        self._emit = lambda kind, **fields: _quietly(emit, kind, **fields)
        self._save = lambda d: _quietly(save, d)
        self._persisted = dict(persisted or {})
        self._lock = threading.RLock()
        self._halt = threading.Event()  # shutdown() asked for: no start, and a ready wait ends
        self._service_stopping = stopping
        self.changed: Callable[[], None] = lambda: None     # told when a start begins (its owner publishes it)
        self.state, self.started_by_us, self.last_error = STOPPED, False, ""
        self.server = None              # the process.ServerProcess we launched or adopted
        self._how: Optional[str] = None  # "command" or "observatory"
        self._launched_at = self.last_used = self.last_failure = None     # clock times
        self._log_offset = 0  # where this launch's lines start in model.log
        self.up_seconds_total = self.busy_seconds_total = self._refused = 0.0  # _refused: a stop it refused

    @property
    def pid(self) -> Optional[int]:
        return self.server.pid if self.server is not None else None

    @property
    def health_url(self) -> str:
        return self.lc.health_url or server_root(self.cfg.url) + "/health"

    def _probe(self):
        with contextlib.suppress(requests.RequestException):
            return outbound.request("GET", self.health_url, seconds=3, cap=0).status_code    # its status only
        return None

    def stop_asked(self) -> bool:
        return self._halt.is_set() or bool(self._service_stopping())

    def ensure(self) -> None:
        with self._lock:
            now = self._clock.now()      # last_used: only once it answers (the model card says when it was)
            status = self._probe()
            if status not in (None, 200, 503) and not self.lc.managed:
                self.state, self.last_used = READY, now   # an unmanaged server that answers, no /health route
                return
            if status == 200:
                if self.started_by_us and self._how == "command" and not self._alive():
                    self._forget()  # ours died: whatever answers now is someone else's
                self.state, self.last_failure, self.last_error, self.last_used = READY, None, "", now
                return
            if status == 503 and not self.lc.via_observatory and not (self.started_by_us and self._alive()):
                self._wait_theirs()  # somebody's server, still loading: wait for it, launch nothing
                return
            if not self.lc.managed:
                self.state = STOPPED
                raise ModelUnavailable(
                    f"the model at {redact.url(self.cfg.url)} is not answering ({redact.url(self.health_url)}) "
                    "and model.lifecycle.manage is off: start it by hand, or name model.lifecycle.server + "
                    "model_path (or a start line)")
            if self.last_failure is not None and now - self.last_failure < self.lc.retry_after_seconds:
                ago, left = now - self.last_failure, self.lc.retry_after_seconds - (now - self.last_failure)
                raise ModelUnavailable(
                    f"the model failed to start {ago:.0f} s ago ({self.last_error}); "
                    f"the next attempt is in {left:.0f} s (model.lifecycle.retry_after_seconds)")
            if self.stop_asked():
                raise ModelUnavailable(NOT_STARTED)
            if status not in (None, 503) and not self.lc.via_observatory and not (self.started_by_us and self._alive()):
                self._fail(procs().port_taken(redact.url(self.health_url), status, redact.url(self.cfg.url)))
            self._start(nothing_answered=status is None)

    def release(self, busy_seconds: float) -> None:
        self.last_used = self._clock.now()
        self.busy_seconds_total += max(0.0, float(busy_seconds or 0.0))

    def tick(self, chain_open: bool) -> None:
        with self._lock:
            if self.started_by_us and self._how == "command" and not self._alive():
                self._exited()      # killed (the OOM killer) or crashed while idle: never shown ready
            elif not chain_open:
                self.stop_now("the cycle is over")      # only a server we started
            elif self.started_by_us:
                now = self._clock.now()
                last = self.last_used if self.last_used is not None else (self._launched_at or now)
                idle = now - max(last, self._refused)       # a stop the Observatory refused: asked again a keep-warm on
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
        """Once (the actor's on_stop, then the runtime's stop): a stop left to the next run is not asked twice."""
        if not self._halt.is_set():
            self._halt.set()        # a start in progress gives up at its next poll, and frees the lock
            self.stop_now("the service is shutting down")

    def adopt(self) -> None:
        """Take back a server a previous run of this service started, or forget it if it is gone."""
        with self._lock:
            p, self._persisted = self._persisted, {}
            if not p.get("started_by_us"):
                return
            how = p.get("how") or "command"
            observed = how == "observatory" and names(self.lc, p)
            if not observed and not ours_to_adopt(self, p):
                if not self.stop_asked():   # a stop cut the look short: the record stays for the next run
                    self._save(dict(_CLEARED))
                return
            server = None if observed else procs().adopt(p, self.lc.stop_grace_seconds, self.stop_asked)
            alive = self._probe() in (200, 503) if observed else server is not None     # 503: still loading
            if not alive:
                log.info("model lifecycle: the server a previous run started (pid %s) is gone", p.get("pid"))
                self._save(dict(_CLEARED))
                return
            self.server, self._how, self.started_by_us = server, how, True
            self._launched_at = self.last_used = self._clock.now()
            self.state = READY if self._probe() == 200 else STARTING
            log.info("model lifecycle: adopted the server a previous run started (pid %s)", p.get("pid"))

    def snapshot(self) -> dict:
        via = ("observatory" if self.lc.via_observatory else "local") if self.lc.managed else None
        return {"managed": self.lc.managed, "via": via, "state": self.state,
                "started_by_us": self.started_by_us, "pid": self.pid, "health_url": self.health_url,
                "last_used": self.last_used, "keep_warm_seconds": self.lc.keep_warm_seconds,
                "up_seconds_total": round(self.up_seconds_total + self._up(), 1),
                "busy_seconds_total": round(self.busy_seconds_total, 1), "last_error": self.last_error}

    def built_command(self) -> list:
        server, model = os.path.expanduser(self.lc.server), os.path.expanduser(self.lc.model_path)
        if not os.path.isfile(server):
            raise FileNotFoundError(f"model.lifecycle.server not found: {server}")
        if not os.path.isfile(model):
            raise FileNotFoundError(f"model.lifecycle.model_path not found: {model}")
        u = urlsplit(self.cfg.url)
        port = u.port or (443 if u.scheme == "https" else 80)
        return [server, "-m", model, "--host", u.hostname or "127.0.0.1", "--port", str(port),
                *cmdline.split(self.lc.server_args, windows=procs().WINDOWS)]

    def _start(self, nothing_answered: bool = False) -> None:
        self.state, t0 = STARTING, time.monotonic()
        _quietly(self.changed)
        if self.lc.via_observatory:
            self._launch_observatory(nothing_answered)
        elif not (self.started_by_us and self._alive()):
            self._forget()
            self._launch_command()
        self._wait_ready(t0, t0 + self.lc.ready_timeout_seconds)

    def _wait_theirs(self) -> None:
        if self.stop_asked():
            raise ModelUnavailable(NOT_STARTED)
        self.state, t0 = STARTING, time.monotonic()
        if self.started_by_us:
            self._forget()      # ours died: what answers is someone else's
        _quietly(self.changed)
        log.info("model lifecycle: a server not ours answers 503 (loading): waiting for it, starting none")
        self._wait_ready(t0, t0 + self.lc.ready_timeout_seconds, theirs=True)
        log.info("model lifecycle: that server is ready after %.1f s; borrowed, never stopped", time.monotonic() - t0)

    def _launch_command(self) -> None:
        try:
            cmd = procs().split_command(self.lc.start) if self.lc.start else self.built_command()
        except FileNotFoundError as exc:
            self._fail(str(exc))
        except ValueError as exc:       # shlex: an unclosed quote
            setting = "model.lifecycle.start" if self.lc.start else "model.lifecycle.server_args"
            self._fail(f"{setting} cannot be read as a command line ({exc}): close its quotes")
        try:
            private.roll(self.log_path)         # this launch's lines start a fresh log past its size
            self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
            server = procs().launch(cmd, self.log_path, os.path.expanduser(self.lc.cwd) if self.lc.cwd else None,
                                    self.lc.stop_grace_seconds)
        except Exception as exc:  # noqa: BLE001 - any launch error fails the start; LaunchFailed is worded
            log.exception("model lifecycle: launching the model server raised")
            self._fail(f"start failed: {transport_words.in_words(exc)}")
        self.server, self._how, self.started_by_us = server, "command", True
        self._launched_at = self._clock.now()
        self._save({**server.record(), "started_by_us": True, "cmd": cmd, "how": "command"})
        log.info("model lifecycle: launched the model server (pid %s): %s", server.pid, cmd)

    def _launch_observatory(self, nothing_answered: bool) -> None:
        could_not = f"the Observatory could not start {self.lc.observatory_service}"
        try:
            data = unless_stopped(self.lc, "ensure", "a sleep or a redraft needs the drafting model", self.stop_asked,
                                  lambda: self._halt.wait(STOP_CHECK_SECONDS))
        except Exception as exc:  # noqa: BLE001 - one that timed out may have started the model for us
            timed_out = nothing_answered and transport_words.cause(exc) == transport_words.TIMED_OUT
            self._fail(f"{could_not}: {ensure_failed(exc, self.lc)}" + stop_given_up(self, timed_out))
        if data is None:    # a stop while it loads: the start we asked for (nothing answered before) is called off
            ours_via_observatory(self, nothing_answered)    # kept: one its stop leaves, the next run adopts
            self._give_up_loading(theirs=False)
        if not data.get("ok") or not data.get("ready"):
            self._fail(f"{could_not}: {data.get('error') or 'it did not report ready'}" +
                       stop_given_up(self, bool(data.get("started"))))
        ours_via_observatory(self, bool(data.get("started")))

    def _wait_ready(self, t0: float, deadline: float, theirs: bool = False) -> None:
        # polls every tenth of the time waited so far, up to poll_seconds; looks for a stop every STOP_CHECK_SECONDS
        while True:
            status = self._probe()
            if status == 200:
                self.state, self.last_failure, self.last_error = READY, None, ""
                self.last_used = self._clock.now()
                if self.started_by_us:
                    self._emit("model_started", how=self._how, seconds=round(time.monotonic() - t0, 1),
                               url=self.cfg.url)
                return
            if self.stop_asked():
                self._give_up_loading(theirs)
            if theirs and status is None:
                self.state = STOPPED
                raise ModelUnavailable(f"the model server at {redact.url(self.health_url)} (not ours) stopped "
                                       "answering while it loaded: see its own log; the next call tries again")
            if not theirs and self._how == "command" and not self._alive():
                code = self.server.exit_code() if self.server is not None else None
                if self.server is not None:
                    self.server.kill_leftovers()
                self._forget()
                self._fail(f"the start command exited with code {'?' if code is None else code} "
                           "before the model answered" + procs().log_tail(self.log_path, self._log_offset))
            if time.monotonic() >= deadline:
                why = (f"the model did not answer {redact.url(self.health_url)} within "
                       f"{self.lc.ready_timeout_seconds:g} s")
                if self._how == "observatory":
                    self._fail(why + stop_given_up(self, False))
                if self.started_by_us:
                    stop_quietly(self)
                    self._forget()
                self._fail(why + (procs().log_tail(self.log_path, self._log_offset) if self._how == "command" else ""))
            step = min(self.lc.poll_seconds, max(0.05, (time.monotonic() - t0) / 10))
            until = time.monotonic() + max(0.0, min(step, deadline - time.monotonic()))
            while not self.stop_asked() and time.monotonic() < until:
                self._halt.wait(max(0.0, min(STOP_CHECK_SECONDS, until - time.monotonic())))

    def _give_up_loading(self, theirs: bool) -> NoReturn:
        """A stop came while the model loads: stop the loading server if it is ours."""
        if self.started_by_us and not theirs:
            log.info("model lifecycle: a stop was asked for while the model loads; stopping pid %s", self.pid)
            self._stop(why=LOADING_STOPPED)
        else:
            self.state = STOPPED
        raise ModelUnavailable(LOADING_STOPPED)

    def _fail(self, why: str) -> NoReturn:
        self.state, self.last_failure, self.last_error = FAILED, self._clock.now(), why
        log.warning("model lifecycle: %s", why)
        self._emit("model_start_failed", error=why)
        raise ModelUnavailable(why)

    def _alive(self) -> bool:
        return self.server is not None and self.server.alive()

    def _exited(self) -> None:
        code, pid = self.server.exit_code() if self.server is not None else None, self.pid
        if self.server is not None:
            self.server.kill_leftovers()
        why = (f"the model server (pid {pid}) exited on its own with code {'?' if code is None else code} (see "
               "model.log in the state folder); the next sleep or redraft starts it again")
        log.warning("model lifecycle: %s", why)
        up, self.state = self._forget(), STOPPED
        self._emit("model_stopped", how="command", up_seconds=round(up, 1), why=why)

    def _stop(self, **why: Any) -> None:
        """why: the event's why= or idle_seconds=. One the Observatory did not stop stays ours: asked again later."""
        was, how, self.state = self.state, self._how, STOPPING
        refused, by_command = stop_quietly(self), self.lc.stop or how != "observatory"
        if refused and (self.stop_asked() or not by_command):   # a command's, only at the service's stop
            self.state, self._refused = was, self._clock.now()
            self.last_error = f"the Observatory did not stop the model ({refused}); it is asked again later"
            if by_command:      # the next run stops it (model.lifecycle.stop) or adopts it by ours_to_adopt's rules
                self.last_error = f"the model may still run: {refused} at the service's stop; the next run stops it"
                log.warning("model lifecycle: %s", self.last_error)
                self._save({**_CLEARED, **(self.server.record() if self.server is not None else {}),
                            "started_by_us": True, "how": how, "unstopped": refused})
            return
        up = self._forget()
        self.state = STOPPED
        self._emit("model_stopped", how=how, up_seconds=round(up, 1), **why)

    def _up(self) -> float:
        """How long the server we started has been up (0: none is; _launched_at is set only while one is)."""
        return 0.0 if self._launched_at is None else max(0.0, self._clock.now() - self._launched_at)

    def _forget(self) -> float:
        """Drop our hold on the server; returns how long it was up."""
        up = self._up()
        self.up_seconds_total += up
        had = self.started_by_us or self.server is not None
        self.server, self._launched_at, self.started_by_us = None, None, False
        if had:
            self._save(dict(_CLEARED))
        return up


def ours_via_observatory(life: ModelLifecycle, started: bool) -> None:
    """already_running: borrowed, never stopped, unless it is the one we had it start (adopted, or loading)."""
    life._how, life.server = "observatory", None
    life.started_by_us = life.started_by_us or started
    if life.started_by_us:
        life._launched_at = life._launched_at if life._launched_at is not None else life._clock.now()
        life._save({**_CLEARED, "started_by_us": True, **record(life.lc)})


def ours_to_adopt(life: ModelLifecycle, p: dict) -> bool:
    """A pid this process launched (its watchdog's pipe is here), or one that runs the configured command and
    answers the model's health URL. The state file is only a claim: anything else is named in the log and left
    alone, never adopted nor stopped. One the Observatory started, which the config no longer names, is stopped;
    so is one the last run's stop did not see stopped, with model.lifecycle.stop."""
    if p.get("unstopped") and life.lc.stop:     # the last run's stop did not see it stopped: stopped now
        stop_left_at_exit(life, p["unstopped"])
    if p.get("how") == "observatory":
        life.last_error = stop_left_behind(life.lc, p, life._emit, life.stop_asked,
                                           lambda: life._halt.wait(STOP_CHECK_SECONDS))
        return False
    pid = p.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    if pid in procs()._WATCHED:
        return True
    why = ""
    try:
        cmd = procs().split_command(life.lc.start) if life.lc.start else life.built_command()
    except (OSError, ValueError) as exc:
        cmd, why = None, f"the configured command cannot be made ({exc})"
    if cmd is not None and not procs().runs_command(pid, cmd):
        why = "it does not run the configured command"
    elif cmd is not None and life._probe() not in (200, 503):
        why = f"{redact.url(life.health_url)} does not answer"
    if why and not procs().psutil.pid_exists(pid):
        log.info("model lifecycle: the server a previous run started (pid %s) is gone", pid)
    elif why:
        log.warning("model lifecycle: the state file names pid %s as the model server a previous run started, "
                    "but %s: that process is left alone (not adopted, never stopped)", pid, why)
    return not why
