"""One outbound HTTP call (the model, Memory, a webhook, a ripple endpoint, a replay's candidate), bounded twice.

- One wall-clock deadline: a single watch thread shuts the call's sockets when it passes (plus GRACE, so a plain
  read timeout ends a silent peer first), so an answer trickled a byte at a time, head or body, ends on time and
  not one read timeout per byte later; the call then fails as a timeout.
- A cap on what is read: the body is read in pieces and counted as it comes; past the cap the call is stopped
  and fails (AnswerTooLarge), so no answer is ever held whole before it is measured.

The invariant: a call made through `call()` never outlives its deadline by more than GRACE (on a Session made
here, or a CancellableSession; on any other session once its head is in) and never holds more than its cap
(plus one piece) of an answer. A Deadline may span several calls (a replay's run, a GET asked twice).
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
import socket
import threading
import time
import weakref
from typing import Any, Optional

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

GRACE = 0.25                # a call's own read timeout ends a silent peer first; the cut comes only after
PIECE = 64 * 1024
CONNECT_SECONDS = 10.0
MB = 1024 * 1024

_calling = threading.local()        # the deadline of the call this thread is making, for the tracked connections


def size_words(cap: int) -> str:
    return f"{cap / MB:g} MB" if cap >= MB else f"{cap / 1024:g} KB" if cap >= 1024 else f"{cap} bytes"


class AnswerTooLarge(requests.RequestException):
    """The answer passed the cap; the call was stopped (transport_words words it, row too_large)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.cap_words = cap, size_words(cap)
        super().__init__(f"the answer passed {self.cap_words}; the call was stopped")


class DeadlinePassed(requests.ReadTimeout):
    """The call's one deadline passed (its sockets were cut, or it passed between two pieces): a timeout."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the call's deadline of {seconds:g} s passed (timed out)")


def shut(sock: Any) -> None:
    with contextlib.suppress(OSError, AttributeError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes a recv() blocked in another thread (close() alone does not)


class Deadline:
    """One wall-clock deadline; the sockets of the calls made within it are cut when it passes."""

    def __init__(self, seconds: float, words: str = "") -> None:
        self.seconds = max(0.0, float(seconds))
        self.at = time.monotonic() + self.seconds
        self.words = words              # how a failure names it (the replay's "one deadline of 5 s (...)")
        self.cut = False
        self._lock = threading.Lock()
        self._socks: list = []

    def left(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.left() <= 0

    def add(self, sock: Any) -> None:
        """A socket the call in flight reads from: cut with the deadline (at once, if it was already cut)."""
        if sock is None:
            return
        with self._lock:
            if not self.cut:
                self._socks.append(sock)
                return
        shut(sock)

    def release(self) -> None:
        """The call ended: its sockets (back in a pool, perhaps) are no longer this deadline's to cut."""
        with self._lock:
            self._socks.clear()

    def _cut(self) -> None:
        with self._lock:
            self.cut = True
            socks, self._socks = self._socks, []
        for sock in socks:
            shut(sock)


class _Watch:
    """One daemon thread for every deadline armed: it cuts each one whose time (plus GRACE) has come."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list = []
        self._seq = itertools.count()
        self._thread: Optional[threading.Thread] = None

    def arm(self, deadline: Deadline) -> list:
        entry = [deadline.at + GRACE, next(self._seq), deadline]
        with self._cond:
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="outbound-deadlines", daemon=True)
                self._thread.start()
            self._cond.notify()
        return entry

    def disarm(self, entry: list) -> None:
        with self._cond:
            entry[2] = None             # left in the heap; dropped when it comes up

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][2] is None:
                    heapq.heappop(self._heap)
                wait = self._heap[0][0] - time.monotonic() if self._heap else None     # None: nothing armed
                if wait is None or wait > 0:
                    self._cond.wait(wait)
                    continue
                due = heapq.heappop(self._heap)[2]
            due._cut()


WATCH = _Watch()


def _track(sock: Any) -> None:
    deadline = getattr(_calling, "deadline", None)
    if deadline is not None:
        deadline.add(sock)


def tracked_pool(pool: type, connection: type, on_new: Any = None) -> type:
    """`pool`, whose connections give each socket they open or reuse to the deadline of the call in flight
    (and each new one to `on_new`, when given)."""
    class Tracked(connection):
        def _new_conn(self):
            if on_new is not None:
                on_new(None)            # may refuse (a cancelled session) before connecting
            sock = super()._new_conn()
            if on_new is not None:
                on_new(sock)
            _track(sock)
            return sock

        def request(self, *args, **kwargs):
            if getattr(self, "sock", None) is not None:     # a kept-alive connection, reused
                _track(self.sock)
            return super().request(*args, **kwargs)

    return type("Tracked" + pool.__name__, (pool,), {"ConnectionCls": Tracked})


class TrackedAdapter(HTTPAdapter):
    def __init__(self, on_new: Any = None) -> None:
        self._pool_classes = {"http": tracked_pool(HTTPConnectionPool, HTTPConnection, on_new),
                              "https": tracked_pool(HTTPSConnectionPool, HTTPSConnection, on_new)}
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pool_classes

    def proxy_manager_for(self, proxy, **kwargs):
        manager = super().proxy_manager_for(proxy, **kwargs)
        manager.pool_classes_by_scheme = self._pool_classes
        return manager


class Session(requests.Session):
    """A requests session whose calls' sockets a deadline can cut."""

    def __init__(self, on_new: Any = None) -> None:
        super().__init__()
        adapter = TrackedAdapter(on_new)
        self.mount("http://", adapter)
        self.mount("https://", adapter)


def session_or_own(session: Optional[requests.Session]) -> Any:
    """For a `with`: the caller's session, left open; or, for None, a Session of its own, closed at the end."""
    return contextlib.nullcontext(session) if session is not None else Session()


def read(resp: requests.Response, deadline: Deadline, cap: int, *, truncate: bool = False) -> bytes:
    """The body, read in pieces within the deadline; past `cap`: AnswerTooLarge (or, with `truncate`, the first
    `cap` bytes, the rest never read). It is also left on resp, for resp.text and resp.json()."""
    buf = bytearray()
    for piece in resp.iter_content(PIECE):
        buf += piece
        if len(buf) > cap:
            if not truncate:
                raise AnswerTooLarge(cap)
            del buf[cap:]
            break
        if deadline.passed():
            raise DeadlinePassed(deadline.seconds)
    body = bytes(buf)
    resp._content, resp._content_consumed = body, True
    return body


def call(session: requests.Session, method: str, url: str, *, deadline: Deadline, cap: int,
         truncate: bool = False, connect_seconds: float = CONNECT_SECONDS, **kw: Any) -> requests.Response:
    """One request within `deadline`, its answer read up to `cap` bytes (0: the head only, the body never read;
    `truncate`: the first `cap` bytes kept, the rest never read, no failure).
    A call the deadline cut raises DeadlinePassed; one past the cap AnswerTooLarge; else what requests raises."""
    left = deadline.left()
    if left <= 0:
        raise DeadlinePassed(deadline.seconds)
    headers = {"Accept-Encoding": "identity", **(kw.pop("headers", None) or {})}    # what is counted is what came
    entry, before = WATCH.arm(deadline), getattr(_calling, "deadline", None)
    _calling.deadline = deadline
    resp = None
    try:
        resp = session.request(method, url, headers=headers, stream=True,
                               timeout=(min(connect_seconds, left), left), **kw)
        conn = getattr(resp.raw, "connection", None) or getattr(resp.raw, "_connection", None)
        deadline.add(getattr(conn, "sock", None))   # a session made elsewhere: its body is cut all the same
        if cap > 0:
            read(resp, deadline, cap, truncate=truncate)
        else:
            resp._content, resp._content_consumed = b"", True
        if cap <= 0 or truncate:
            resp.close()                # what was wanted is in: the rest is never read
        if deadline.cut:                # a head cut past its status line reads as a whole one: it is not
            raise DeadlinePassed(deadline.seconds)
        return resp
    except Exception as exc:
        if resp is not None:
            resp.close()
        cut = isinstance(exc, OSError) and (deadline.cut or deadline.passed())  # requests' errors are OSErrors
        if cut and not isinstance(exc, (AnswerTooLarge, DeadlinePassed, requests.ConnectTimeout)):
            raise DeadlinePassed(deadline.seconds) from None
        raise
    finally:
        WATCH.disarm(entry)
        deadline.release()
        _calling.deadline = before


def request(method: str, url: str, *, seconds: float, cap: int, **kw: Any) -> requests.Response:
    """One call on a session of its own (closed after), within one deadline of `seconds`, its answer read up to
    `cap` (0: the head only): a probe of a model server's /health, /models or /props."""
    with Session() as session:
        return call(session, method, url, deadline=Deadline(seconds), cap=cap, **kw)


# ------------------------------------------------------------------ a session another thread can cut short
# cancel() shuts the sockets of the calls in flight. Its connections are the tracked ones above, so a call's own
# deadline cuts them too. A `vet` given to it sees each socket once connected, before anything is sent on it:
# raising there closes the socket.


class _Sockets:
    """The sockets the session's connections opened (weakly held), and whether it was cancelled."""

    def __init__(self, vet=None) -> None:
        self._lock = threading.Lock()
        self._live: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self.cancelled = False
        self.vet = vet

    def opened(self, sock: Any) -> None:
        """Told before each connect (sock None: refused once cancelled) and after it (the new socket)."""
        if sock is None:
            if self.cancelled:
                raise OSError("the call was cancelled")
            return
        if self.vet is not None:
            try:
                self.vet(sock)
            except BaseException:
                shut(sock)
                sock.close()
                raise
        with self._lock:
            self._live.add(sock)
            cancelled = self.cancelled
        if cancelled:                    # cancelled while this one was connecting
            shut(sock)
            raise OSError("the call was cancelled")

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for sock in live:
            shut(sock)


class CancellableSession(Session):
    """cancel() shuts the sockets of the calls in flight (closing a session only closes its idle pool): the
    blocked read ends at once, the server sees its client go (llama.cpp stops generating)."""

    def __init__(self, vet=None) -> None:
        self._sockets = _Sockets(vet)
        super().__init__(on_new=self._sockets.opened)

    @property
    def cancelled(self) -> bool:
        return self._sockets.cancelled

    def cancel(self) -> None:
        """Cut short every call in flight and refuse new ones (any thread)."""
        self._sockets.cancel()
        self.close()
