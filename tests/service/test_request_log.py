"""The request log cannot be forged (issue 16): a path with %0a, ESC, NUL or CR is one line, escaped."""
from __future__ import annotations

import io
import logging
import socket

import pytest

from hippocampus.http.auth import escape_controls

FORGED = b"2026-12-01 07:50:00,000 WARNING hippocampus: FORGED LINE"


@pytest.fixture
def request_log():
    """The hippocampus.http lines as a file would get them."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("hippocampus.http")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield out
    logger.removeHandler(handler)
    logger.setLevel(old_level)


def raw_get(port: int, target: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


@pytest.mark.parametrize("target", [
    b"/x%0a" + FORGED.replace(b" ", b"%20") + b"%1b[31m%00%0d",
    b"/x\x1b[2J\x00%0A" + FORGED.replace(b" ", b"%20"),
], ids=["percent-encoded", "raw-bytes"])
def test_a_path_with_newline_and_esc_is_one_escaped_line(make_config, start_service, request_log, target):
    svc = start_service(make_config())
    answer = raw_get(svc.port, target)
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]
    text = request_log.getvalue()
    lines = [ln for ln in text.splitlines() if "FORGED" in ln]
    assert len(lines) == 1, text
    line = lines[0]
    assert line.startswith(tuple("0123456789")) and " INFO hippocampus.http.auth: GET /x" in line, line
    assert "\\n2026-12-01" in line and "-> 404" in line, line
    assert "\\x1b[" in line and "\\x00" in line, line
    assert not any(c in text for c in "\x1b\x00\r"), repr(text)
    assert text.count("\n") == len(text.splitlines())            # no line but the ones logging wrote


def test_escape_controls():
    assert escape_controls("/plain/path?x") == "/plain/path?x"
    assert escape_controls("/a\nb\rc\td\x1be\x00f\x7fg\x85h\u2028i\\j") == \
        "/a\\nb\\rc\\td\\x1be\\x00f\\x7fg\\x85h\\u2028i\\\\j"
    assert escape_controls("/café ☃") == "/café ☃"
