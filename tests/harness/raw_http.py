"""HTTP as bytes on a loopback socket: what requests will not send (two Host headers, a head without its
body, two framings at once), and every answer that comes back on the connection."""
from __future__ import annotations

import json
import socket
import time


def connect(port: int, source: str = "127.0.0.1", timeout: float = 5.0) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))


def read_until_closed(s: socket.socket, within: float) -> bytes:
    """Everything the server sends until it closes the connection, or until `within` seconds pass."""
    deadline = time.monotonic() + within
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return data
        except (ConnectionResetError, BrokenPipeError):
            return data
        if not chunk:
            return data
        data += chunk


def exchange(port: int, data: bytes, *, source: str = "127.0.0.1", within: float = 5.0) -> bytes:
    with connect(port, source) as s:
        s.sendall(data)
        return read_until_closed(s, within)


def answers(raw: bytes) -> list:
    """[(status, {header: value}, body bytes)] for every complete answer in `raw`, in order."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        n = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:n]))
        raw = rest[n:]
    return out


def one_answer(raw: bytes) -> tuple:
    got = answers(raw)
    assert len(got) == 1, f"expected one answer, got {len(got)}: {raw[:600]!r}"
    return got[0]


def family_detail(answer: tuple, status: int) -> str:
    code, headers, body = answer
    assert code == status, (code, body)
    assert headers["content-type"].startswith("application/json"), headers
    doc = json.loads(body)
    assert list(doc) == ["detail"] and isinstance(doc["detail"], str) and doc["detail"], doc
    return doc["detail"]


def request(method: str, path: str, headers: list, body: bytes = b"") -> bytes:
    """A request's bytes: the headers as (name, value) pairs, sent as given (repeats included)."""
    lines = [f"{method} {path} HTTP/1.1", *[f"{k}: {v}" for k, v in headers]]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def timed_health(port: int, source: str, within: float = 5.0) -> float:
    """Seconds for GET /health from a new connection out of `source`; fails unless it answers 200."""
    t0 = time.monotonic()
    raw = exchange(port, request("GET", "/health", [("Host", "127.0.0.1"), ("Connection", "close")]),
                   source=source, within=within)
    took = time.monotonic() - t0
    got = answers(raw)
    assert got and got[0][0] == 200, f"/health from {source} did not answer 200 within {within} s: {raw[:300]!r}"
    return took
