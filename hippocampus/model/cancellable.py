"""A requests session another thread can cut short: cancel() shuts the sockets of the calls in flight.

Its connections are hippocampus.outbound's tracked ones, so a call's own deadline cuts them too. A `vet` given
to it sees each socket once connected, before anything is sent on it: raising there closes the socket.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from hippocampus import outbound


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
                outbound.shut(sock)
                sock.close()
                raise
        with self._lock:
            self._live.add(sock)
            cancelled = self.cancelled
        if cancelled:                    # cancelled while this one was connecting
            outbound.shut(sock)
            raise OSError("the call was cancelled")

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for sock in live:
            outbound.shut(sock)


class CancellableSession(outbound.Session):
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
