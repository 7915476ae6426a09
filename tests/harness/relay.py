"""A real TCP relay on a port of the test's choosing: nothing listens there until `open`, then every
connection is carried to the target (a real SerenMemory, a real fake model), until `close`."""
from __future__ import annotations

import re
import socket
import threading
from collections import Counter


class Relay:
    def __init__(self, port: int, target: tuple) -> None:
        self.port, self.target = port, target
        self._server = None
        self._conns: list = []
        self._clients: set = set()

    def seen(self, src: socket.socket, data: bytes) -> None:
        """Bytes on their way through (src: the side that sent them); a relay only carries them."""

    def open(self) -> "Relay":
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        self._server = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()
        return self

    def close(self) -> None:
        if self._server is not None:
            try:                 # wakes the accept: a socket closed under a blocked accept goes on listening
                self._server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._server.close()
            self._server = None
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass
        self._conns.clear()

    def _accept(self, s: socket.socket) -> None:
        while True:
            try:
                a, _ = s.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(self.target, timeout=10)
            except OSError:
                a.close()
                continue
            self._conns += [a, b]
            self._clients.add(a)
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                self.seen(src, data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


REQUEST_LINE = re.compile(rb"(?:^|\r\n)(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (/[^ ?\r\n]*)(?:\?[^ \r\n]*)? HTTP/1\.[01]\r\n")


class RecordingProxy(Relay):
    """A relay on a port the OS picks that records every HTTP request line a client sends through it
    (method and path, the query left off), so a test counts the requests its code makes of the target."""

    def __init__(self, target: tuple) -> None:
        super().__init__(0, target)
        self.requests: list = []
        self._lock = threading.Lock()

    def open(self) -> "RecordingProxy":
        super().open()
        self.port = self._server.getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def seen(self, src: socket.socket, data: bytes) -> None:
        if src in self._clients:
            with self._lock:
                self.requests += [(m.decode(), p.decode()) for m, p in REQUEST_LINE.findall(data)]

    def take(self) -> list:
        """The requests recorded since the last take, in order."""
        with self._lock:
            out, self.requests = self.requests, []
        return out

    @staticmethod
    def by_route(requests: list) -> Counter:
        """'GET /drafts': n, with ids in a path shown as {id} (so /near/abc and /near/def count as one route)."""
        return Counter(f"{m} {re.sub(r'/[0-9a-f]{16,}|/[0-9a-f-]{36}', '/{id}', p)}" for m, p in requests)
