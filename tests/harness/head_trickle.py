"""Slow request heads from many loopback addresses, run in a process of its own (`HeadTrickleProcess`).

Why a process: the attacker is another program. Run as a thread of the test, it shared the service's GIL, and
its 400 sockets' Python loop made the service's own loop wait for the GIL at every system call: an answer the app
had written in 3 ms went out up to 2 s later (measured: first byte at 1,959 ms, app done at 3 ms; out of process,
under the same attack, the slowest first byte was 76 ms). That is a weakness of the test, not of the server.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

# a head that never ends within the test: one byte a second of it, and the pad is longer than any run
HEAD = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 4096


class HeadTrickle:
    """`per_source` connections out of each address in `sources`, each sending HEAD one byte every `every` s;
    a connection the server closes is opened again on the next pass (a pass every 0.1 s). Non-blocking
    throughout (a connect waiting in a full queue never stalls the others). Stops by itself after `lasts` s."""

    def __init__(self, port: int, sources: list, per_source: int, *, every: float = 1.0, lasts: float = 60.0):
        self.port, self.every = int(port), every
        self.slots = [[src, None, 0, 0.0] for src in sources for _ in range(per_source)]   # src, sock, sent, due
        self.opened = self.closed = self.bytes_sent = self.passes = 0
        self._stop = threading.Event()
        self._until = time.monotonic() + lasts
        for slot in self.slots:
            self._open(slot, time.monotonic())
        self._t = threading.Thread(target=self._run, name="head-trickle", daemon=True)
        self._t.start()

    def _open(self, slot: list, now: float) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((slot[0], 0))
            s.connect_ex(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return
        slot[1:] = [s, 0, now]
        self.opened += 1

    def _run(self) -> None:
        while not self._stop.wait(0.1) and time.monotonic() < self._until:
            now = time.monotonic()
            for slot in self.slots:
                s = slot[1]
                if s is None or self._ended(s):
                    if s is not None:
                        s.close()
                        self.closed += 1
                    self._open(slot, now)
                    continue
                if now >= slot[3] and slot[2] < len(HEAD):
                    try:
                        if s.send(HEAD[slot[2]:slot[2] + 1]) == 1:
                            slot[2] += 1
                            self.bytes_sent += 1
                            slot[3] = now + self.every
                    except (BlockingIOError, InterruptedError):
                        pass                       # still connecting: the next pass tries again
                    except OSError:
                        s.close()
                        self.closed += 1
                        self._open(slot, now)
            self.passes += 1

    @staticmethod
    def _ended(s: socket.socket) -> bool:
        try:
            return s.recv(65536) == b""            # the server closed it (or answered it: a head never ends)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            return exc.errno != 107                # ENOTCONN: still connecting; anything else: gone

    def stop(self) -> None:
        self._stop.set()
        self._t.join(10)
        for slot in self.slots:
            if slot[1] is not None:
                slot[1].close()

    def running(self) -> bool:
        return self._t.is_alive()

    def wait(self, seconds: float) -> None:
        self._t.join(seconds)

    def counts(self) -> dict:
        return {"slots": len(self.slots), "opened": self.opened, "closed": self.closed,
                "bytes_sent": self.bytes_sent, "passes": self.passes}


class HeadTrickleProcess:
    """A HeadTrickle in a child process; `counts` is what it last said of itself (every 0.2 s)."""

    def __init__(self, port: int, sources: list, per_source: int, *, every: float = 1.0, lasts: float = 60.0):
        args = json.dumps({"port": int(port), "sources": sources, "per_source": per_source, "every": every,
                           "lasts": lasts})
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.harness.head_trickle", args],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        self.counts = {"slots": len(sources) * per_source, "opened": 0, "closed": 0, "bytes_sent": 0, "passes": 0}
        self._reader = threading.Thread(target=self._read, name="head-trickle-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.counts = json.loads(line)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(10)
        self.proc.stdout.close()


def main(argv: list) -> None:
    a = json.loads(argv[0])
    attack = HeadTrickle(a["port"], a["sources"], a["per_source"], every=a["every"], lasts=a["lasts"])
    try:
        while attack.running():
            print(json.dumps(attack.counts()), flush=True)
            attack.wait(0.2)
        print(json.dumps(attack.counts()), flush=True)
    finally:
        attack.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
