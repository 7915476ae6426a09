"""The supervised child: a thin mailbox around plain objects. Its methods are its messages (pykka's proxy: a
call is an ask, `.defer()` a tell); after every message it publishes a snapshot to the board, which the routes
read instead of asking a busy actor.

A tell that raises kills the child; its on_failure tells the supervisor, which restarts it.
"""
from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time

import pykka

from hippocampus.transport_words import in_words

log = logging.getLogger(__name__)
DOWN_OK = contextlib.suppress(pykka.ActorDeadError)     # a tell to a child that is down (restarting) is dropped


def kept_for(registry, name: str, most: int) -> "Kept":
    """The tells kept for the child `name` while it was down (or left unread when it died), in the registry's
    estate: its next instance reads them first. Past `most`, the oldest go."""
    return registry.estate(name).setdefault("kept_tells", Kept(maxlen=most))


class Kept(collections.deque):
    """A deque that remembers whether the log has said it drops (once a burst)."""
    dropping = False


def keep(kept: Kept, item, lost, who: str) -> None:
    """Keep `item` in `kept`; past its cap the oldest goes: `lost(oldest)` says so on its record, and the log says
    it once until the next instance has read what was kept."""
    if len(kept) >= kept.maxlen:
        with contextlib.suppress(IndexError):   # read meanwhile by a new instance: nothing to drop
            lost(kept.popleft())
            if not kept.dropping:
                kept.dropping = True
                log.warning("actor %s is down and %d events wait for it: the oldest are dropped (each says so on "
                            "its record); POST /actors/%s/restart brings it back", who, kept.maxlen, who)
    kept.append(item)


def take_all(kept: Kept):
    """Each kept tell once, oldest first (a new one may join while they are read)."""
    while kept:
        yield kept.popleft()
    kept.dropping = False


def oldest_first(kept: Kept):
    """Each kept event once, in the order they happened (seq): the unread tells a dying instance keeps come after
    any told while it died, yet happened first. One kept while these are carried comes in the next round."""
    while kept:
        yield from sorted(take_all(kept), key=lambda event: event["seq"])


def answer(future: pykka.Future, end: float, stopping, what: str, grace: float = 0.0):
    """The actor's answer by `end` (time.monotonic(); pykka.Timeout past it), waited for in slices: once the stop
    has come, `grace` s more at most, then ServiceStopping(what)."""
    while True:
        if stopping.is_set():
            end = min(end, stopping.at + grace)
        try:
            return future.get(timeout=max(0.0, min(0.1, end - time.monotonic())))
        except pykka.Timeout:
            if time.monotonic() < end:
                continue
            stopping.check(what)
            raise


class Publishing(pykka.ThreadingActor):
    """An actor that publishes (its publish()) after every message it reads, whatever the message did."""

    def _handle_receive(self, message):
        try:
            return super()._handle_receive(message)
        finally:
            self.publish()


class Supervised(Publishing):
    name = "child"
    wants_beat = False      # wants the supervisor's fanned-out beat
    use_daemon_thread = True    # one the service's stop abandons (busy past its time) never holds the exit
    stop_waits = True       # the service's stop waits (within its time) for its work to end and its on_stop

    def __init__(self, supervisor, runtime) -> None:
        super().__init__()
        self._supervisor = supervisor       # its proxy (private: a proxy of this child does not look into it)
        self.rt = runtime
        self.doing = None                   # (what, since) while a piece of work runs

    def inherit(self, key: str, make):
        """What the last instance left under `key` in the registry's estate (it outlives a crash or restart), else
        make()'s, left to the next one."""
        estate = self.rt.registry.estate(self.name)
        if key not in estate:
            estate[key] = make()
        return estate[key]

    def on_start(self) -> None:
        self.publish()

    def on_failure(self, exc_type, exc, tb) -> None:
        try:
            for envelope in list(self.actor_inbox.queue):       # told, and dying unread with this instance
                if envelope.reply_to is None and isinstance(envelope.message, pykka.messages.ProxyCall):
                    self.dropped(envelope.message.attr_path[-1], *envelope.message.args)
        except Exception:  # noqa: BLE001 - the supervisor hears of the crash whatever happens here
            log.exception("%s could not let go of what it was told", self.name)
        with DOWN_OK:
            self._supervisor.child_failed.defer(self.name, self.actor_urn, in_words(exc))

    def dropped(self, method: str, *args) -> None:
        """A tell this instance dies without reading: what it carried (a tick's cycle lock) is let go here."""

    def beat(self, at: float) -> None:
        """The supervisor's beat (to children that want it)."""
        if self.name in self.rt.tick_flags:
            self.rt.tick_flags[self.name].clear()      # the next beat may be queued again
        self.on_beat(at)

    def on_beat(self, at: float) -> None:
        pass

    def ping(self) -> bool:
        """Answered once on_start is done (and anything asked before)."""
        return True

    @contextlib.contextmanager
    def working(self, what: str, token=None):
        """Its progress on the board while `what` runs (busy, what, since). token: the cycle lock the caller took
        for it, let go at the end; then nothing starts once the stop has come."""
        self.doing = (what, time.time())
        self.publish()
        try:
            if token is not None:
                self.rt.ctx.stopping.check(f"the {what} was not started")
            yield
        finally:
            self.doing = None
            if token is not None:
                self.rt.ctx.cycle.leave(token)

    def progress(self) -> dict:
        what, since = self.doing or (None, None)
        return {"busy": self.doing is not None, "what": what, "since": since}

    def snapshot(self) -> dict:
        return {}

    def publish(self) -> None:
        try:
            self.rt.board.put(self.name, self.snapshot())
        except Exception:  # noqa: BLE001 - a snapshot never fails a message
            log.exception("%s could not publish its snapshot", self.name)


class InTurn(Supervised):
    """A child whose tells must go out in the order told: each instance waits (on_start, first) until the last one
    has ended (its mailbox read, or kept by its on_failure), then carries what was kept for it (catch_up), so what
    the last one was told goes out before what this one is told. Its turn ends with it (on_stop, on_failure, or
    an on_start that raises)."""
    has_turn = False

    def on_start(self) -> None:
        self.inherit("turn", threading.Lock).acquire()
        self.has_turn = True
        try:
            self.catch_up()
        except BaseException:
            self.end_turn()
            raise
        super().on_start()

    def catch_up(self) -> None:
        """What was told while no instance was up (or left unread by the last one), carried first."""

    def on_stop(self) -> None:
        self.end_turn()

    def on_failure(self, exc_type, exc, tb) -> None:
        try:
            super().on_failure(exc_type, exc, tb)     # its unread tells kept first, then the next may carry
        finally:
            self.end_turn()

    def end_turn(self) -> None:
        if self.has_turn:
            self.has_turn = False
            self.rt.registry.estate(self.name)["turn"].release()
