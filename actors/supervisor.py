"""One-for-one supervision over the children, with restart intensity, and the one ticker thread's beat.

A child that crashes is restarted after a backoff; one that crashes more than max_restarts times in
window_seconds is `failed`, left down until an operator restarts it. Children are reached through the
registry, never through a ref kept from before a restart. An operator's restart never blocks the supervisor nor
the one who asked: a running child is told to stop, a thread of its own waits up to STOP_WAIT_SECONDS for its
current work to end, and the new instance starts when that thread says so (ChildStopped); restarts asked while
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

from actors.messages import ChildFailed, ChildStopped, RestartChild, Tick
from hippocampus import sdnotify
from hippocampus.transport_words import in_words

log = logging.getLogger("hippocampus.supervisor")
MAX_DOUBLINGS = 5           # the backoff doubles with each crash in the window, up to 2**5 times backoff_seconds
LIVENESS_GRACE_S = 0.2      # a dead child's own ChildFailed gets this long to arrive before the check calls it
STOP_WAIT_SECONDS = 10     # an operator's restart gives a busy child this long to end its work, then starts anew
SHOWN = ("state", "restarts", "last_error", "last_error_at", "started_at")     # of a child, on the board


class Ticker(threading.Thread):
    def __init__(self, target: pykka.ActorRef, every: float):
        super().__init__(name="hippocampus-ticker", daemon=True)
        self.target, self.every = target, every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                self.target.tell(Tick(time.time()))
            except pykka.ActorDeadError:
                return


class Registry(dict):
    """The current ref of each child, by name (one dict operation at a time, atomic in CPython), and each
    child's estate (what one instance leaves to the next)."""

    def __init__(self) -> None:
        super().__init__()
        self.estates: dict = {}

    def estate(self, name: str) -> dict:
        return self.estates.setdefault(name, {})


class Supervisor(pykka.ThreadingActor):
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
        for name in self.specs:
            self._start_child(name)
        self.ticker = Ticker(self.actor_ref, self.rt.cfg.supervisor.check_seconds)
        self.ticker.start()
        self._publish()

    def on_stop(self, *exc) -> None:
        if self.ticker:
            self.ticker.stopped.set()
        for name in reversed(list(self.specs)):
            ref = self.registry.get(name)
            if ref is not None:
                try:
                    ref.stop(block=True, timeout=10)
                except pykka.Timeout:
                    log.error("%s did not stop within 10 s", name)
                except pykka.ActorDeadError:
                    pass
            self.children[name]["state"] = "stopped"
            self.registry.pop(name, None)
        self._publish()

    on_failure = on_stop        # a crash of the supervisor stops its children too

    def _start_child(self, name: str) -> None:
        cls, c = self.specs[name], self.children[name]
        if cls.wants_beat:
            self.rt.tick_flags[name] = threading.Event()     # a new instance starts with no Tick queued
        try:
            ref = cls.start(self.actor_ref, self.rt)
        except Exception as exc:  # noqa: BLE001 - a constructor that raises is a crash like any other
            log.exception("%s could not be started", name)
            self._failed(name, None, in_words(exc))
            return
        self.registry[name] = ref
        c.update(state="running", started_at=time.time(), urn=ref.actor_urn, restart_due=None, dead_seen=None)

    def on_receive(self, message):
        try:
            if isinstance(message, ChildFailed):
                self._failed(message.name, message.urn, message.error)
            elif isinstance(message, Tick):
                self._tick(message)
            elif isinstance(message, RestartChild):
                return self._operator_restart(message.name, message.force)
            elif isinstance(message, ChildStopped):
                self._stopped(message)
            return None
        finally:
            self._publish()

    def _failed(self, name: str, urn: Optional[str], error: str) -> None:
        c = self.children.get(name)
        if c is None or (urn is not None and urn != c["urn"]) or c["state"] == "failed":
            return
        now = time.time()
        c.update(last_error=error, last_error_at=now)
        if c["state"] == "restarting":          # the liveness check saw it first: now with the real error
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

    def _tick(self, tick: Tick) -> None:
        sdnotify.watchdog_ping()        # from this thread: a supervisor that hangs stops the pings
        now = time.time()
        for name, c in self.children.items():
            if c["state"] == "running":
                ref = self.registry.get(name)
                if ref is None:
                    self._failed(name, c["urn"], c["last_error"])
                elif not ref.is_alive():
                    # a crashed child is marked stopped just before its ChildFailed comes: give that a moment
                    if c["dead_seen"] is None:
                        c["dead_seen"] = now
                    elif now - c["dead_seen"] >= LIVENESS_GRACE_S:
                        self._failed(name, c["urn"], "the actor stopped on its own (it died while starting)")
            if c["state"] == "restarting" and c["restart_due"] is not None and now >= c["restart_due"]:
                c["recent"].append(now)
                c["restarts"] += 1
                self._start_child(name)
                if c["state"] == "running":
                    self.rt.events.emit("actor_restarted", actor=name, restarts=c["restarts"])
                    log.info("actor %s restarted (%d restart(s))", name, c["restarts"])
        for name, cls in self.specs.items():
            if cls.wants_beat and self.children[name]["state"] == "running":
                self._beat(name, tick)

    def _beat(self, name: str, tick: Tick) -> None:
        """Tell a child the beat, unless one is still queued or running (a busy child finds one Tick waiting)."""
        ref, queued = self.registry.get(name), self.rt.tick_flags.get(name)
        if ref is None or queued is None or queued.is_set():
            return
        queued.set()
        try:
            ref.tell(tick)
        except pykka.ActorDeadError:
            queued.clear()

    def _operator_restart(self, name: str, force: bool) -> dict:
        c = self.children.get(name)
        if c is None:
            return {"status": 404, "detail": f"no actor named {name!r}; the actors are " + ", ".join(self.specs)}
        if c["state"] == "running" and not force:
            return {"status": 409, "detail": f"{name} is running; add ?force=true to restart it anyway"}
        if c["stopping"] is not None:           # one restart already waits for the old instance: this is it
            return {"status": 202, "actor": name, "state": c["state"]}
        ref = self.registry.pop(name, None)
        c["recent"].clear()
        if ref is None or not ref.is_alive():
            self._start_again(name)
            return {"status": 202, "actor": name, "state": c["state"]}
        c.update(state="restarting", restart_due=None, stopping=ref.actor_urn)
        log.info("actor %s: restart asked by the operator; its current work has up to %g s to end",
                 name, STOP_WAIT_SECONDS)
        threading.Thread(target=self._await_stop, args=(name, ref), name=f"hippocampus-restart-{name}",
                         daemon=True).start()
        return {"status": 202, "actor": name, "state": c["state"]}

    def _await_stop(self, name: str, ref: pykka.ActorRef) -> None:
        """On a thread of its own: stop the old instance, waiting for its current work, then say so."""
        ended = True
        try:
            ref.stop(block=True, timeout=STOP_WAIT_SECONDS)
        except pykka.Timeout:
            ended = False
        except pykka.ActorDeadError:
            pass
        with contextlib.suppress(pykka.ActorDeadError):       # the supervisor stopped meanwhile: nothing to start
            self.actor_ref.tell(ChildStopped(name, ref.actor_urn, ended))

    def _stopped(self, msg: ChildStopped) -> None:
        c = self.children.get(msg.name)
        if c is None or c["stopping"] != msg.urn:
            return
        c["stopping"] = None
        if not msg.ended:
            log.warning("actor %s did not end its current work within %g s of the operator's restart; a new one "
                        "starts beside it (the old one stops as soon as that work ends)", msg.name, STOP_WAIT_SECONDS)
        self._start_again(msg.name)

    def _start_again(self, name: str) -> None:
        """The operator's restart: the crash count starts over; a constructor that raises is a crash."""
        c = self.children[name]
        c.update(state="stopped", restart_due=None)
        c["restarts"] += 1
        self._start_child(name)
        if c["state"] == "running":
            self.rt.events.emit("actor_restarted", actor=name, restarts=c["restarts"], by="operator")
            log.info("actor %s restarted by the operator (%d restart(s))", name, c["restarts"])

    def _publish(self) -> None:
        self.rt.board.put("actors", {name: {k: c[k] for k in SHOWN} for name, c in self.children.items()})
