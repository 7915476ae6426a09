"""Bad input on every route: GET /openapi.json describes them all (behind the bearer); malformed JSON, wrong
types, unknown fields, huge bodies, odd methods, path tricks and malformed bearers never get a 5xx, and every
error is the family's {"detail": "..."} with a JSON content type. Then schemathesis, from /openapi.json.

Some answers come from waitress itself, before the app sees the request: a body over the cap (413, in the
family shape), a request line that is not ASCII (raw UTF-8 bytes in the path) and headers over waitress's
256 KB limit. The last two are checked to be 4xx, not for the family shape."""
from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from hippocampus.http.openapi import SPEC

pytestmark = pytest.mark.timeout(180)
TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PUBLIC = {"/", "/health", "/viewer"}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
ROUTES = sorted((path, m.upper()) for path, ops in SPEC["paths"].items() for m in ops)


@pytest.fixture
def guarded(make_config, start_service):
    svc = start_service(make_config(server={"bearer_token": TOKEN}, voice={"enabled": True},
                                    sleep={"nudge_wait_seconds": 0}))
    svc.mcp                                   # wait for the background MCP mount
    return svc


def concrete(path: str) -> str:
    return path.replace("{name}", "chain")


def family(r, where: str = "") -> None:
    """No 5xx; an error is {"detail": "..."} as JSON (on /mcp a JSON-RPC error is the protocol's own)."""
    what = f"{where} -> {r.status_code} {r.headers.get('Content-Type')} {r.content[:200]!r}"
    assert r.status_code < 500, what
    if r.status_code < 400:
        return
    assert (r.headers.get("Content-Type") or "").startswith("application/json"), what
    body = json.loads(r.content)
    if isinstance(body, dict) and body.get("jsonrpc") == "2.0" and where.split()[-1].startswith("/mcp"):
        assert isinstance(body.get("error"), dict), what
        return
    assert isinstance(body, dict) and set(body) == {"detail"} and isinstance(body["detail"], str) \
        and body["detail"], what


class Raw:
    """One request over a bare socket, exactly as written (no client normalizes the path)."""

    def __init__(self, status: int, headers: dict, content: bytes):
        self.status_code, self.headers, self.content = status, headers, content


def raw(port: int, line: bytes, headers: bytes = b"", body: bytes = b"") -> Raw:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.settimeout(20)
        try:
            s.sendall(line + b"\r\nHost: 127.0.0.1\r\n" + headers + b"Connection: close\r\n"
                      + (b"Content-Length: %d\r\n" % len(body) if body else b"") + b"\r\n" + body)
        except OSError:
            pass                                  # the server may answer and close before the end of a huge line
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    head, _, content = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.strip().title(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return Raw(status, hdrs, content)


# ---------------------------------------------------------------- /openapi.json

def test_openapi_is_private_and_describes_every_route(guarded):
    base = guarded.url
    r = requests.get(base + "/openapi.json", timeout=10)
    assert r.status_code == 401 and r.json() == {"detail": "unauthorized"}
    r = requests.get(base + "/openapi.json", headers=AUTH, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    doc = r.json()
    assert doc["openapi"].startswith("3.") and doc == json.loads(json.dumps(SPEC))

    served: dict = {}

    def walk(nodes):
        for node in nodes:
            if node.resource is not None:
                served[node.uri_template] = {m for m in METHODS
                                             if callable(getattr(node.resource, "on_" + m.lower(), None))}
            walk(node.children)
    walk(guarded.app._router._roots)
    described = {p: {m.upper() for m in ops} for p, ops in doc["paths"].items()}
    assert set(described) - {"/mcp"} == set(served), (set(described) ^ set(served))
    for path, methods in served.items():
        assert described[path] == methods, (path, described[path], methods)
    for path, ops in doc["paths"].items():
        for m, op in ops.items():
            assert op.get("summary") and op.get("responses"), (path, m)
            assert (op.get("security") == []) == (path in PUBLIC), (path, m)
            for p in op.get("parameters", []):
                assert p["in"] in ("query", "path") and "schema" in p, (path, m, p)
    assert doc["paths"]["/voice"]["put"]["requestBody"]["required"] is True
    assert doc["paths"]["/mcp"]["post"]["requestBody"]["required"] is True


# ---------------------------------------------------------------- the bearer

BAD_BEARERS = [None, "", "Bearer", "Bearer ", "Basic x", f"Basic {TOKEN}", f"bearer  {TOKEN} ", f"Bearer  {TOKEN}",
               f"Bearer\t{TOKEN}", f"Token {TOKEN}", f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", TOKEN,
               f"Bearer {TOKEN}\u00ff", "Bearer \u00e9\u00e8", f"Bearer {TOKEN}, Bearer {TOKEN}"]
GOOD_BEARERS = [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"bEaReR {TOKEN}"]


def test_a_missing_or_malformed_bearer_is_refused_on_every_private_route(guarded):
    base = guarded.url
    for path, method in ROUTES:
        for header in BAD_BEARERS:
            headers = {} if header is None else {"Authorization": header.encode("latin-1")}
            r = requests.request(method, base + concrete(path), headers=headers, timeout=30)
            where = f"{header!r} {method} {path}"
            family(r, where)
            if path in PUBLIC:
                assert r.status_code != 401, where
            else:
                assert r.status_code == 401 and r.json() == {"detail": "unauthorized"}, where
                assert r.headers.get("WWW-Authenticate") == "Bearer", where


def test_the_scheme_word_is_case_insensitive(guarded):
    base = guarded.url
    for header in GOOD_BEARERS:
        for path, method in ROUTES:
            if method != "GET" or path == "/viewer":
                continue
            r = requests.get(base + concrete(path), headers={"Authorization": header}, timeout=30)
            assert r.status_code == 200, (header, path, r.status_code, r.text[:200])
            family(r, f"{header} GET {path}")


# ---------------------------------------------------------------- methods and sizes

def test_odd_methods_are_405_everywhere(guarded):
    base = guarded.url
    for path, ops in SPEC["paths"].items():
        allowed = {m.upper() for m in ops}
        for method in METHODS:
            if method in allowed:
                continue
            headers = {} if path in PUBLIC else AUTH
            r = requests.request(method, base + concrete(path), headers=headers, data=b'{"x": 1}', timeout=30)
            family(r, f"{method} {path}")
            assert r.status_code == 405, f"{method} {path} -> {r.status_code}"


def test_a_body_over_a_megabyte_is_413_everywhere(guarded):
    base = guarded.url
    huge = b"{" + b'"a": "' + b"x" * 1_200_000 + b'"}'
    for path, _ in ROUTES:
        for method in ("POST", "PUT", "PATCH"):
            headers = {**({} if path in PUBLIC else AUTH), "Content-Type": "application/json"}
            r = requests.request(method, base + concrete(path), headers=headers, data=huge, timeout=60)
            family(r, f"huge {method} {path}")
            assert r.status_code == 413, f"huge {method} {path} -> {r.status_code}"
    r = requests.post(base + "/sleep", data=huge, timeout=60)    # no bearer: waitress refuses it from its size
    family(r, "huge POST /sleep without the bearer")
    assert r.status_code == 413
    r = requests.put(base + "/voice", headers={**AUTH, "Content-Type": "application/json"},
                     data=(chunk for chunk in [b'{"text": "', b"x" * 1_200_000, b'"}']), timeout=60)   # chunked
    family(r, "chunked PUT /voice")
    assert r.status_code in (400, 413), r.status_code


# ---------------------------------------------------------------- bodies and queries

BAD_BODIES = [b"{bad", b"{", b"[", b'{"text": }', b"\xff\xfe\x00", b"null", b"[1, 2]", b'"text"', b"42",
              b'{"text": NaN}', b"[" * 50_000 + b"]" * 50_000, b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
              b'{"text": 1' + b"0" * 5000 + b"}", b'{"text": "\\ud800"}', b"\x00" * 64]


def test_malformed_json_and_wrong_types_never_5xx(guarded):
    base = guarded.url
    json_ct = {**AUTH, "Content-Type": "application/json"}
    for body in BAD_BODIES:
        r = requests.put(base + "/voice", headers=json_ct, data=body, timeout=30)
        family(r, f"PUT /voice {body[:20]!r}")
        assert r.status_code == 400, (body[:20], r.status_code, r.text[:200])
    for payload in ({"text": 5}, {"text": None}, {"text": ["a"]}, {"text": {"a": 1}}, {"text": ""},
                    {"text": "   "}, {"text": "ok", "why": 7}, {"text": "ok", "why": ["x"]}, {"why": "no text"},
                    {"text": "x" * 20_000}, {}):
        r = requests.put(base + "/voice", headers=json_ct, json=payload, timeout=30)
        family(r, f"PUT /voice {str(payload)[:40]}")
        assert r.status_code == 400, (payload, r.status_code, r.text[:200])
    r = requests.put(base + "/voice", headers=json_ct, json={"text": "I speak plainly", "unknown": [1, 2]},
                     timeout=30)
    assert r.status_code == 200, r.text                        # an unknown field is ignored
    for ctype in ("application/xml", "text/plain", "multipart/form-data; boundary=x",
                  "application/json; charset=latin-9"):
        r = requests.put(base + "/voice", headers={**AUTH, "Content-Type": ctype}, data=b'{"text": "hi"}',
                         timeout=30)
        family(r, f"PUT /voice as {ctype}")
    # bodies nobody asked for, on the POST routes: ignored or refused, never a 5xx
    for path in ("/sleep", "/tend", "/check", "/nudge", "/actors/chain/restart", "/mcp"):
        for body in BAD_BODIES[:6] + BAD_BODIES[10:12]:
            r = requests.post(base + path, headers={**json_ct, "Accept": "application/json, text/event-stream"},
                              data=body, timeout=60)
            family(r, f"POST {body[:12]!r} {path}")


BAD_QUERIES = [
    ("GET", "/events", {"limit": "abc"}, 400), ("GET", "/events", {"limit": "1e3"}, 400),
    ("GET", "/events", {"limit": "9" * 5000}, 400), ("GET", "/events", {"limit": "-5"}, 200),
    ("GET", "/events", {"limit": "0"}, 200), ("GET", "/events", {"limit": ["1", "2"]}, 200),
    ("GET", "/events", {"type": "\u2603" * 50}, 400), ("GET", "/events", {"type": "%00"}, 400),   # no such event
    ("GET", "/events", {"type": "purged"}, 200),
    ("GET", "/history", {"limit": "[]"}, 400), ("GET", "/history", {"limit": " 7 "}, 200),
    ("GET", "/voice/history", {"limit": "ten"}, 400), ("GET", "/status", {"unknown": "field"}, 200),
    ("POST", "/sleep", {"without_brief": "maybe"}, 400), ("POST", "/sleep", {"without_brief": "\u00ff"}, 400),
    ("POST", "/actors/chain/restart", {"force": "perhaps"}, 400),
    ("POST", "/actors/chain/restart", {"force": "false"}, 409),
    ("POST", "/actors/nobody/restart", {"force": "true"}, 404),
]


def test_wrong_types_in_queries_are_400_not_500(guarded):
    base = guarded.url
    for method, path, params, expected in BAD_QUERIES:
        r = requests.request(method, base + path, headers=AUTH, params=params, timeout=30)
        family(r, f"{method} {path}?{params}")
        assert r.status_code == expected, (method, path, params, r.status_code, r.text[:200])


# ---------------------------------------------------------------- path tricks

def test_path_tricks(guarded):
    port = guarded.port
    auth = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
    cases = [
        (b"GET /../status HTTP/1.1", auth, 404), (b"GET /./status HTTP/1.1", auth, 404),
        (b"GET /status/.. HTTP/1.1", auth, 404), (b"GET /%2e%2e/status HTTP/1.1", auth, 404),
        (b"POST /actors/%2e%2e/restart HTTP/1.1", auth, 404), (b"POST /actors/../restart HTTP/1.1", auth, 404),
        (b"POST /actors/..%2fchain/restart HTTP/1.1", auth, 404),
        (b"POST /actors/%00/restart HTTP/1.1", auth, 404), (b"POST /actors/%E2%98%83/restart HTTP/1.1", auth, 404),
        (b"GET /st%C3%A4tus HTTP/1.1", auth, 404), (b"GET /%F0%9F%92%A4 HTTP/1.1", auth, 404),
        (b"GET /%ff%fe HTTP/1.1", auth, 404), (b"GET /status%00 HTTP/1.1", auth, 404),
        (b"GET /" + b"a" * 100_000 + b" HTTP/1.1", auth, 404),
        (b"GET /actors/" + b"%41" * 20_000 + b"/restart HTTP/1.1", auth, 405),
        # never a way around the bearer through a public prefix
        (b"GET /health/../status HTTP/1.1", b"", 404), (b"GET /viewer/../status HTTP/1.1", b"", 404),
        (b"GET /viewer/%2e%2e/status HTTP/1.1", b"", 404), (b"GET /health/%2e%2e/openapi.json HTTP/1.1", b"", 404),
        (b"GET /../status HTTP/1.1", b"", 401), (b"GET //status HTTP/1.1", b"", 401),
        (b"GET /status/ HTTP/1.1", b"", 401), (b"GET /STATUS HTTP/1.1", b"", 401),
    ]
    for line, headers, expected in cases:
        r = raw(port, line, headers)
        family(r, f"{line[:60]!r}")
        assert r.status_code == expected, (line[:60], r.status_code, r.content[:200])
        if not headers and r.status_code == 200:
            pytest.fail(f"{line[:60]!r} answered without the bearer")
    # refused by waitress before the app: 4xx, plain text
    for line in (b"GET /st\xc3\xa4tus HTTP/1.1", b"GET /" + b"a" * 300_000 + b" HTTP/1.1"):
        r = raw(port, line, auth)
        assert 400 <= r.status_code < 500, (line[:40], r.status_code)
    assert requests.get(guarded.url + "/status", headers=AUTH, timeout=10).status_code == 200


# ---------------------------------------------------------------- schemathesis

EXAMPLES = 15


def test_schemathesis_finds_no_server_error(guarded):
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import not_a_server_error

    base = guarded.url
    spec = requests.get(base + "/openapi.json", headers=AUTH, timeout=10).json()
    schema = schemathesis.openapi.from_dict(spec).exclude(path_regex=r"^/(mcp|viewer)")
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) == sum(len(ops) for p, ops in SPEC["paths"].items() if p not in ("/mcp", "/viewer"))
    calls = {"n": 0}
    skipped: list = []
    t0 = time.monotonic()
    for operation in operations:
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case):
                calls["n"] += 1
                resp = case.call(base_url=base, headers=AUTH, timeout=60)
                case.validate_response(resp, checks=[not_a_server_error])
                ctype = (resp.headers.get("content-type") or [""])[0]
                family(Raw(resp.status_code, {"Content-Type": ctype}, resp.content),
                       f"schemathesis {case.method} {case.formatted_path}")
            try:
                run()
            except Unsatisfiable:
                assert mode == schemathesis.GenerationMode.NEGATIVE, operation.label
                skipped.append(operation.label)      # nothing in it to get wrong (no parameters, no body)
    assert calls["n"] >= len(operations) * 2
    assert time.monotonic() - t0 < 90
    assert requests.get(base + "/status", headers=AUTH, timeout=10).status_code == 200
