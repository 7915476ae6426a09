"""A requests session another thread can cut short: cancel() shuts the sockets of the calls in flight. A `vet`
given to it sees each socket once connected, before anything is sent on it: raising there closes the socket."""
from __future__ import annotations

import contextlib
import socket
import threading
import weakref

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


class _Sockets:
    """The sockets the session's connections opened (weakly held), and whether it was cancelled."""

    def __init__(self, vet=None) -> None:
        self._lock = threading.Lock()
        self._live: "weakref.WeakSet[socket.socket]" = weakref.WeakSet()
        self.cancelled = False
        self.vet = vet

    def add(self, sock: socket.socket) -> None:
        if self.vet is not None:
            try:
                self.vet(sock)
            except BaseException:
                _shut(sock)
                sock.close()
                raise
        with self._lock:
            self._live.add(sock)
            cancelled = self.cancelled
        if cancelled:                    # cancelled while this one was connecting
            _shut(sock)
            raise OSError("the call was cancelled")

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            live = list(self._live)
        for sock in live:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)  # wakes a recv() blocked in another thread (close() alone does not)


def _tracked(pool: type, connection: type, sockets: _Sockets) -> type:
    """`pool`, its connections recording their sockets in `sockets`."""
    class Tracked(connection):
        def _new_conn(self):
            if sockets.cancelled:
                raise OSError("the call was cancelled")
            sock = super()._new_conn()
            sockets.add(sock)
            return sock

    return type("Tracked" + pool.__name__, (pool,), {"ConnectionCls": Tracked})


class _Adapter(HTTPAdapter):
    def __init__(self, sockets: _Sockets) -> None:
        self._pool_classes = {"http": _tracked(HTTPConnectionPool, HTTPConnection, sockets),
                              "https": _tracked(HTTPSConnectionPool, HTTPSConnection, sockets)}
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pool_classes

    def proxy_manager_for(self, proxy, **kwargs):
        manager = super().proxy_manager_for(proxy, **kwargs)
        manager.pool_classes_by_scheme = self._pool_classes
        return manager


class CancellableSession(requests.Session):
    """cancel() shuts the sockets of the calls in flight (closing a session only closes its idle pool): the
    blocked read ends at once, the server sees its client go (llama.cpp stops generating)."""

    def __init__(self, vet=None) -> None:
        super().__init__()
        self._sockets = _Sockets(vet)
        adapter = _Adapter(self._sockets)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def cancel(self) -> None:
        """Cut short every call in flight and refuse new ones (any thread)."""
        self._sockets.cancel()
        self.close()
