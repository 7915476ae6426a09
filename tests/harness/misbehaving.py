"""A real socket server (port 0) that misbehaves as a person's box does: it reads each request whole, then

- "close":  closes the connection without a word of answer;
- "half":   answers 200 with a chunked body and closes halfway through a chunk (requests' ChunkedEncodingError,
            urllib3's ProtocolError around an IncompleteRead);
- "html":   answers 200 with an HTML page (any web server that is not the one asked for);
- "error":  answers 500 with a JSON error;
- "silent": never answers (until it is closed);
- "trickle": answers headers, then one byte of body every `every` s (0.2 unless told), never finishing;
- "trickle_head": sends its answer's head one byte every `every` s, never finishing it;
- "huge":   answers 200 with a JSON object of `huge_bytes` (150 MB unless told), sent as fast as it is read (a
            chat answer's shape: {"choices": [{"message": {"content": "aaa..."}}]});
- "reset_second": answers the first request of a connection 200 {"status": "ok"} (kept alive) and resets the
            connection (SO_LINGER 0) at the second, as a kept-alive connection closed by the server meets a request.

Every request it read is counted, and its first line kept in `seen`. only_posts: a GET is answered 200 {}, and a GET of
/models with a one-model list (a model server's /health and model list answer, as the model watch asks; its
chat call misbehaves). close() ends every connection it holds."""
from __future__ import annotations

import socket
import struct
import threading
import time

MODEL_LIST = b'{"object": "list", "data": [{"id": "stand-in", "object": "model"}]}'   # GET .../models, only_posts

HTML = b"<!doctype html><html><head><title>Welcome to nginx!</title></head><body>It works</body></html>"


class Misbehaving:
    def __init__(self, mode: str, path: str = "", only_posts: bool = False, huge_bytes: int = 150 * 2 ** 20,
                 every: float = 0.2) -> None:
        self.mode, self.only_posts, self.huge_bytes, self.every = mode, only_posts, huge_bytes, every
        self.requests = 0
        self.seen: list = []
        self._stop = threading.Event()
        self._conns: list = []
        self._lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}{path}"
        threading.Thread(target=self._serve, daemon=True, name=f"misbehaving-{mode}").start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket):
        """The request's first line, or None when the connection closed."""
        data = b""
        while b"\r\n\r\n" not in data:
            got = conn.recv(65536)
            if not got:
                return None
            data += got
        head, _, body = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            got = conn.recv(65536)
            if not got:
                return None
            body += got
        first = head.split(b"\r\n", 1)[0]
        if self.only_posts and first.startswith(b"GET "):
            return first
        with self._lock:
            self.requests += 1
            self.seen.append(first.decode())
        return first

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(30)
            answered = False
            while not self._stop.is_set():
                first = self._read_request(conn)
                if first is None:
                    break
                if self.only_posts and first.startswith(b"GET "):
                    body = MODEL_LIST if b"/models" in first.split(b"\r\n", 1)[0] else b"{}"
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\n\r\n" + body)
                    continue
                if self.mode == "close":
                    break
                if self.mode == "reset_second":
                    if answered:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        break
                    answered = True
                    body = b'{"status": "ok", "features": ["drafts"]}'
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                                 + str(len(body)).encode() + b"\r\n\r\n" + body)
                    continue
                if self.mode == "half":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n"
                                 b"99\r\n{\"choices\": [{\"message\": {\"content\": \"{\\\"operat")
                    time.sleep(0.05)
                    break
                if self.mode == "html":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                                 + str(len(HTML)).encode() + b"\r\n\r\n" + HTML)
                    continue
                if self.mode == "error":
                    body = b'{"error": "out of memory"}'
                    conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                    continue
                if self.mode == "trickle":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000"
                                 b"\r\n\r\n")
                    while not self._stop.wait(self.every):
                        conn.sendall(b" ")
                    break
                if self.mode == "trickle_head":
                    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"x" * 100000:
                        if self._stop.wait(self.every):
                            break
                        conn.sendall(bytes([byte]))
                    break
                if self.mode == "huge":
                    self._huge(conn)
                    break
                self._stop.wait()           # silent
                break
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _huge(self, conn: socket.socket) -> None:
        head, tail = b'{"choices": [{"message": {"content": "', b'"}, "finish_reason": "stop"}]}'
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(self.huge_bytes).encode() + b"\r\n\r\n" + head)
        left, block = self.huge_bytes - len(head) - len(tail), b"a" * 2 ** 20
        while left > 0 and not self._stop.is_set():
            conn.sendall(block[:left])
            left -= len(block)
        conn.sendall(tail)

    def close(self) -> None:
        self._stop.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)    # wakes the accept() (a close alone leaves it listening)
        except OSError:
            pass
        self.sock.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
