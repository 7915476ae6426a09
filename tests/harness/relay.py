"""A real TCP relay on a port of the test's choosing: nothing listens there until `open`, then every
connection is carried to the target (a real SerenMemory, a real fake model), until `close`."""
from __future__ import annotations

import socket
import threading


class Relay:
    def __init__(self, port: int, target: tuple) -> None:
        self.port, self.target = port, target
        self._server = None
        self._conns: list = []

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
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
