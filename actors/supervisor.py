"""One-for-one supervision over the children, with restart intensity, and the one ticker thread's beat.

A child that crashes is restarted after a backoff; one that crashes more than max_restarts times in
window_seconds is `failed`, left down until an operator restarts it. Children are reached through the
registry, never through a ref kept from before a restart. An operator's restart never blocks the supervisor nor
the one who asked: a running child is told to stop, a thread of its own waits up to STOP_WAIT_SECONDS for its
current work to end, and the new instance starts when that thread says so (child_stopped); restarts asked while
one waits are the same restart.
"""
from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from typing import Optional

import pykka

from pykka.typing import ActorMemberMixin, proxy_method

from hippocampus import sdnotify
from hippocampus.transport_words import in_words

from actors.base import Publishing

log = logging.getLogger(__name__)
MAX_DOUBLINGS = 5           # the backoff doubles with each crash in the window, up to 2**5 times backoff_seconds
LIVENESS_GRACE_S = 0.2      # a dead child's own child_failed gets this long to arrive before the check calls it
STOP_WAIT_SECONDS = 10     # an operator's restart gives a busy child this long to end its work, then starts anew
STOP_SECONDS = 7.0          # the service's stop, from SIGTERM, waits this long in all for its children (systemd: 10)
SHOWN = ("state", "restarts", "last_error", "last_error_at", "started_at")     # of a child, on the board


class UnknownChild(LookupError):
    """An operator's restart named no child."""


class ChildRunning(RuntimeError):
    """An operator's restart of a child that runs, without force."""


class ChildDown(RuntimeError):
    """The supervisor has stopped (or does not answer): nothing was restarted."""


class Ticker(threading.Thread):
    def __init__(self, supervisor: "SupervisorProxy", every: float):
        super().__init__(name="hippocampus-ticker", daemon=True)
        self.supervisor, self.every = supervisor, every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                self.supervisor.beat.defer(time.time())
            except pykka.ActorDeadError:
                return


class Registry(dict):
    """The current ref of each child, by name (one dict operation at a time, atomic in CPython), and each
    child's estate (what one instance leaves to the next)."""

    def __init__(self) -> None:
        super().__init__()
        self.estates: dict = {}
        self.proxies: dict = {}

    def proxy(self, name: str):
        """The child's pykka proxy (made once per instance), or None while it is down."""
        ref = self.get(name)
        if ref is None:
            return None
        proxy = self.proxies.get(name)
        if proxy is None or proxy.actor_ref is not ref:
            proxy = self.proxies[name] = ref.proxy()
        return proxy

    def estate(self, name: str) -> dict:
        return self.estates.setdefault(name, {})


class Supervisor(Publishing):
    def __init__(self, runtime, children: list) -> None:
        super().__init__()
        self.rt = runtime
        cfg = runtime.cfg.supervisor
        self.max_restarts, self.window, self.backoff = cfg.max_restarts, cfg.window_seconds, cfg.backoff_seconds
        self.specs = {cls.name: cls for cls in children}
        self.children = {name: {"state": "stopped", "restarts": 0, "last_error": None, "last_error_at": None,
                                "started_at": None, "urn": None, "recent": collections.deque(),
                                "restart_due": None, "dead_seen": None, "stopping": None} for name in self.specs}
        self.registry = runtime.registry
        self.ticker: Optional[Ticker] = None

    def on_start(self) -> None:
        self._proxy = self.actor_ref.proxy()        # handed to the children and the ticker (private: not proxied)
        for name in self.specs:
            self._start_child(name)
        self.ticker = Ticker(self._proxy, self.rt.cfg.supervisor.check_seconds)
        self.ticker.start()
        self.publish()

    def on_stop(self, *exc) -> None:
        if self.ticker:
            self.ticker.stopped.set()
        deadline = (self.rt.ctx.stopping.at or time.monotonic()) + STOP_SECONDS     # once for all of them
        told = [(name, self.registry.get(name)) for name in reversed(list(self.specs))]
        for name, ref in told:
            if ref is not None:
                with contextlib.suppress(pykka.Timeout):    # a child already dead answers False; one the stop
                    ref.stop(block=self.specs[name].stop_waits,     # does not wait on (a watch, the replay) is told
                             timeout=max(0.05, deadline - time.monotonic()))
            self.children[name]["state"] = "stopped"
            self.registry.pop(name, None)
        for name, ref in told:
            if ref is not None and not ref.actor_stopped.wait(0.05):
                what = (self.rt.board.get(name) or {}).get("what")
                log.warning("actor %s was still busy%s at the end of the stop: it is abandoned, and the process exits "
                            "without waiting for it", name, f" ({what})" if what else "")
        self.publish()

    on_failure = on_stop        # a crash of the supervisor stops its children too

    def _start_child(self, name: str) -> None:
        cls, c = self.specs[name], self.children[name]
        if cls.wants_beat:
            self.rt.tick_flags[name] = threading.Event()     # a new instance starts with no beat queued
        try:
            ref = cls.start(self._proxy, self.rt)
        except Exception as exc:  # noqa: BLE001 - a constructor that raises is a crash like any other
            log.exception("%s could not be started", name)
            self.child_failed(name, None, in_words(exc))
            return
        self.registry[name] = ref
        c.update(state="running", started_at=time.time(), urn=ref.actor_urn, restart_due=None, dead_seen=None)

    def ping(self) -> bool:
        """Answered once on_start has started the children."""
        return True

    def child_failed(self, name: str, urn: Optional[str], error: str) -> None:
        """A child's on_failure (or the liveness check), or its constructor raising (urn None): restart it after a
        backoff, or leave it failed."""
        c = self.children.get(name)
        if c is None or (urn is not None and urn != c["urn"]) or c["state"] == "failed":
            return
        now = time.time()
        c.update(last_error=error, last_error_at=now)
        if c["state"] == "restarting" and urn is not None:  # the liveness check saw it first: now with the real error
            return
        self.registry.pop(name, None)
        recent = c["recent"]
        while recent and now - recent[0] > self.window:
            recent.popleft()
        self.rt.events.emit("actor_crashed", actor=name, error=error)
        log.error("actor %s crashed: %s", name, error)
        if len(recent) >= self.max_restarts:
            c["state"] = "failed"
            self.rt.events.emit("actor_failed", actor=name, error=error, restarts=c["restarts"])
            log.error("actor %s crashed %d times in %g s: left down; POST /actors/%s/restart brings it back",
                      name, len(recent) + 1, self.window, name)
            return
        c["state"] = "restarting"
        # doubling per recent crash, capped (32x): with a high max_restarts a storm never waits for hours
        c["restart_due"] = now + self.backoff * (2 ** min(len(recent), MAX_DOUBLINGS))

    def beat(self, at: float) -> None:
        """The ticker's beat: the liveness check, the restarts due, and the beat fanned out to the children."""
        sdnotify.watchdog_ping()        # from this thread: a supervisor that hangs stops the pings
        now = time.time()
        for name, c in self.children.items():
            if c["state"] == "running":
                ref = self.registry.get(name)
                if ref is None:
                    self.child_failed(name, c["urn"], c["last_error"])
                elif not ref.is_alive():
                    # a crashed child is marked stopped just before its child_failed comes: give that a moment
                    c["dead_seen"] = c["dead_seen"] or now
                    if now - c["dead_seen"] >= LIVENESS_GRACE_S:
                        self.child_failed(name, c["urn"], "the actor stopped on its own (it died while starting)")
            if c["state"] == "restarting" and c["restart_due"] is not None and now >= c["restart_due"]:
                c["recent"].append(now)
                self._restart(name)
        for name, cls in self.specs.items():
            if cls.wants_beat and self.children[name]["state"] == "running":
                self._beat(name, at)

    def _beat(self, name: str, at: float) -> None:
        """Tell a child the beat, unless one is still queued or running (a busy child finds one beat waiting)."""
        queued, proxy = self.rt.tick_flags.get(name), self.registry.proxy(name)
        if queued is None or queued.is_set() or proxy is None:
            return
        queued.set()
        try:
            proxy.beat.defer(at)
        except pykka.ActorDeadError:
            queued.clear()

    def restart_child(self, name: str, force: bool = False) -> str:
        """An operator's restart, answered at once with the child's state (UnknownChild, ChildRunning)."""
        c = self.children.get(name)
        if c is None:
            raise UnknownChild(f"no actor named {name!r}; the actors are " + ", ".join(self.specs))
        if c["state"] == "running" and not force:
            raise ChildRunning(f"{name} is running; add ?force=true to restart it anyway")
        if c["stopping"] is not None:           # one restart already waits for the old instance: this is it
            return c["state"]
        ref = self.registry.pop(name, None)
        c["recent"].clear()
        if ref is None or not ref.is_alive():
            self._start_again(name)
            return c["state"]
        c.update(state="restarting", restart_due=None, stopping=ref.actor_urn)
        log.info("actor %s: restart asked by the operator; its current work has up to %g s to end",
                 name, STOP_WAIT_SECONDS)
        threading.Thread(target=self._await_stop, args=(name, ref, self._proxy),
                         name=f"hippocampus-restart-{name}", daemon=True).start()
        return c["state"]

    def _await_stop(self, name: str, ref: pykka.ActorRef, supervisor: "SupervisorProxy") -> None:
        """On a thread of its own: stop the old instance, waiting for its current work, then say so."""
        try:
            ref.stop(block=True, timeout=STOP_WAIT_SECONDS)     # one already dead answers False
            ended = True
        except pykka.Timeout:
            ended = False
        with contextlib.suppress(pykka.ActorDeadError):       # the supervisor stopped meanwhile: nothing to start
            supervisor.child_stopped.defer(name, ref.actor_urn, ended)

    def child_stopped(self, name: str, urn: str, ended: bool) -> None:
        """An instance an operator's restart stopped has ended (or was given up on): start the new one."""
        c = self.children.get(name)
        if c is None or c["stopping"] != urn:
            return
        c["stopping"] = None
        if not ended:
            log.warning("actor %s did not end its current work within %g s of the operator's restart; a new one "
                        "starts beside it (the old one stops as soon as that work ends)", name, STOP_WAIT_SECONDS)
        self._start_again(name)

    def _start_again(self, name: str) -> None:
        """The operator's restart: the crash count starts over; a constructor that raises is a crash."""
        self.children[name].update(state="stopped", restart_due=None)
        self._restart(name, by="operator")

    def _restart(self, name: str, **by: str) -> None:
        """A new instance, counted; said (event and log) once it runs. by: the operator's restart's by=."""
        c = self.children[name]
        c["restarts"] += 1
        self._start_child(name)
        if c["state"] == "running":
            self.rt.events.emit("actor_restarted", actor=name, restarts=c["restarts"], **by)
            log.info("actor %s restarted%s (%d restart(s))", name, " by the operator" if by else "", c["restarts"])

    def publish(self) -> None:
        self.rt.board.put("actors", {name: {k: c[k] for k in SHOWN} for name, c in self.children.items()})


class SupervisorProxy(ActorMemberMixin, pykka.ActorProxy[Supervisor]):
    ping = proxy_method(Supervisor.ping)
    beat = proxy_method(Supervisor.beat)
    child_failed = proxy_method(Supervisor.child_failed)
    restart_child = proxy_method(Supervisor.restart_child)
    child_stopped = proxy_method(Supervisor.child_stopped)
