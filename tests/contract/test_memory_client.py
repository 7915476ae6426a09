"""MemoryClient against the real SerenMemory: every method the hippocampus relies on, and its two errors;
and the harness's ReviewingClient, the calls only tests make (review, forget, read long-term memory)."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from hippocampus.memory import NO_DRAFTS, MemoryClient, MemoryError_, MemoryRefused, MemoryUnavailable
from tests.harness.memory_client import ReviewingClient
from tests.harness.memory_server import free_port


class CountingSession(requests.Session):
    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, str]] = []

    def request(self, method, url, *args, **kwargs):
        self.calls.append((method, url))
        return super().request(method, url, *args, **kwargs)


@pytest.fixture
def client(memory) -> ReviewingClient:
    return ReviewingClient(memory.url, timeout=30)


def _draft_with_one_core(short_id: str, content: str = "the fish dream had a very long tail",
                         topic: str = "fish, dreams") -> dict:
    return {"summary": "a dream about a fish", "attempt": 1, "terminal": False,
            "operations": [{"kind": "new_core", "content": content, "topic": topic,
                            "source_short_ids": [short_id], "evidence_count": 1,
                            "rationale": "it came up"}]}


def _approved_core(client: ReviewingClient, hand, content: str = "the fish dream had a very long tail") -> str:
    sid = hand.short(content, topic="fish, dreams")
    res = client.submit_draft(_draft_with_one_core(sid, content))
    out = client.review_draft(res["id"], [{"op": 0, "verdict": "approve"}])
    return out["results"][0]["long_term_id"]


# ---------------------------------------------------------------- service

def test_features_are_listed_and_cached(memory):
    session = CountingSession()
    c = MemoryClient(memory.url, session=session)
    feats = c.features()
    assert {"target_op", "restate_guard", "redraft_of", "terminal_edits"} <= feats
    assert len(session.calls) == 1 and session.calls[0] == ("GET", memory.url + "/health")
    assert c.features() is feats
    assert len(session.calls) == 1, "the second features() call went to Memory"
    c.features(refresh=True)
    assert len(session.calls) == 2


def test_health_and_reachable(client):
    assert client.health()["ok"] is True
    assert client.reachable() is True
    assert ReviewingClient(f"http://127.0.0.1:{free_port()}", timeout=2).reachable() is False


def test_the_bearer_is_sent(memory, monkeypatch):
    seen = []
    c = MemoryClient(memory.url, bearer="tok-123")
    real = requests.Session.request

    def spy(self, method, url, *a, **kw):
        seen.append(self.headers.get("Authorization"))
        return real(self, method, url, *a, **kw)
    monkeypatch.setattr(requests.Session, "request", spy)
    c.health()
    assert seen == ["Bearer tok-123"]


# ---------------------------------------------------------------- short-term

def test_shorts_read_back_what_memory_was_given(client, hand):
    assert client.shorts() == []
    a = hand.short("first fragment about the garden", topic="garden", ts=1000.0)
    b = hand.short("second fragment about the garden", topic="garden", ts=2000.0)
    entries = client.shorts()
    assert [e["id"] for e in entries] == [b, a]          # newest first
    assert entries[1]["content"] == "first fragment about the garden"
    assert entries[1]["metadata"].get("topic") == "garden"
    assert [e["id"] for e in client.shorts(limit=1)] == [b]


def test_add_short(client, hand):
    res = client.add_short("written by the client", topic="t")
    assert res["ok"] is True
    assert [e["id"] for e in hand.shorts()] == [res["id"]]


# ---------------------------------------------------------------- briefs, drafts, the cull

def test_a_brief_and_a_draft_through_review_close_and_consume(client, hand):
    assert client.open_briefs() == [] and client.latest_brief() is None
    sid = hand.short("the fish dream had a very long tail", topic="fish, dreams")
    brief = client.submit_brief("we talked about the fish dream", promote_hints=["fish dream"],
                                noise_hints=["weather"], completed_intents=[])
    assert brief["ok"] is True
    opened = client.open_briefs()
    assert [b["id"] for b in opened] == [brief["id"]]
    assert client.latest_brief()["id"] == brief["id"]
    assert "fish dream" in client.latest_brief()["content"]

    body = _draft_with_one_core(sid)
    body["brief_id_used"] = brief["id"]
    res = client.submit_draft(body)
    assert res["ok"] is True and res["operations"] == 1
    draft_id = res["id"]
    assert [d["id"] for d in client.drafts("pending")] == [draft_id]
    assert client.draft(draft_id)["operations"][0]["source_short_ids"] == [sid]
    assert [a["id"] for a in client.draft_chain(draft_id)] == [draft_id]

    with pytest.raises(MemoryRefused) as exc:          # a pending draft does not close
        client.close_draft(draft_id)
    assert exc.value.status == 409

    review = client.review_draft(draft_id, [{"op": 0, "verdict": "approve"}], note="good")
    assert review["status"] == "reviewed" and review["approved"] == 1
    core_id = review["results"][0]["long_term_id"]
    assert client.drafts("pending") == []
    assert [d["id"] for d in client.drafts("reviewed")] == [draft_id]

    closed = client.close_draft(draft_id)
    assert closed["status"] == "closed"
    assert client.draft(draft_id)["status"] == "closed"

    consumed = client.consume_brief(brief["id"], draft_id)
    assert consumed == {"ok": True, "consumed": brief["id"]}
    assert client.open_briefs() == [] and client.latest_brief() is None
    assert [b["id"] for b in hand.all_briefs()] == [brief["id"]]

    got = client.memory(core_id)
    assert got["tier"] == "long" and "fish dream" in got["content"]
    assert [e["id"] for e in client.long()] == [core_id]
    assert client.audit(limit=5)["chain_count"] >= 1


def test_a_denied_op_is_reviewed_with_its_critique(client, hand):
    sid = hand.short("a fragment that will be denied", topic="t")
    d = client.submit_draft(_draft_with_one_core(sid, "a core the reviewer does not like"))
    with pytest.raises(MemoryRefused) as exc:
        client.review_draft(d["id"], [{"op": 0, "verdict": "deny"}])
    assert exc.value.status == 400 and "critique" in exc.value.detail
    out = client.review_draft(d["id"], [{"op": 0, "verdict": "deny", "critique": "say what happened"}])
    assert out["denied"] == 1
    assert client.draft(d["id"])["operations"][0]["critique"] == "say what happened"


# ---------------------------------------------------------------- near-term

def test_near_add_list_delete(client):
    assert client.list_near() == []
    a = client.add_near("ask about the fish dream", topic="hippocampus, review")
    b = client.add_near("an expiring note", expires_at=4_102_444_800.0, trigger_type="time")
    assert a["ok"] is True and b["ok"] is True
    listed = {e["id"]: e for e in client.list_near()}
    assert set(listed) == {a["id"], b["id"]}
    assert listed[a["id"]]["metadata"].get("topic") == "hippocampus, review"
    assert client.delete_near(a["id"]) == {"ok": True, "deleted": a["id"]}
    assert [e["id"] for e in client.list_near(include_completed=True)] == [b["id"]]
    assert client.delete_near("no-such-note")["ok"] is True     # 200 even when unknown


# ---------------------------------------------------------------- long-term

def test_search_long_finds_an_approved_core(client, hand):
    core_id = _approved_core(client, hand)
    hand.short("the fish dream again, still in short-term", topic="fish")
    hits = client.search_long("fish dream long tail", n=5)
    assert hits, "search found nothing"
    assert all(h.get("tier") == "long" for h in hits), hits
    assert core_id in {h["id"] for h in hits} | {(h.get("metadata") or {}).get("core_id") for h in hits}


def test_memory_of_an_unknown_id_is_none(client):
    assert client.memory("no-such-memory") is None
    assert client.satellites("no-such-core") is None


def test_satellites_of_a_core(client, hand):
    core_id = _approved_core(client, hand)
    sat = client.satellites(core_id)
    assert sat["core"]["id"] == core_id and "satellites" in sat


def test_the_service_client_reads_a_core_with_its_satellites(memory, hand):
    """The service's own client (not the test harness's) reads GET /long/{id}/satellites: the core and its count;
    None for an id that is no long-term entry."""
    core_id = _approved_core(ReviewingClient(memory.url), hand)
    got = MemoryClient(memory.url).satellites(core_id)
    assert (got["core"]["id"], got["count"]) == (core_id, 0)
    assert MemoryClient(memory.url).satellites("no-such-core") is None


# ---------------------------------------------------------------- tidy

TIDY_CASES = [
    (dict(age_out=True, near=False, sweep=False, purge=False), {"aged_out"}),
    (dict(age_out=False, near=True, sweep=False, purge=False), {"near"}),
    (dict(age_out=False, near=False, sweep=True, purge=False), {"pruned_swept"}),
    (dict(age_out=False, near=False, sweep=False, purge=True), {"purged"}),
    (dict(age_out=False, near=False, sweep=False, purge=False), set()),
    (dict(age_out=True, near=True, sweep=True, purge=True), {"aged_out", "near", "pruned_swept", "purged"}),
]


def test_tidy_reports_only_the_steps_that_ran(client):
    for flags, keys in TIDY_CASES:
        out = client.tidy(**flags)
        assert out["ok"] is True
        assert set(out) - {"ok"} == keys, (flags, out)
        if "aged_out" in keys:
            assert isinstance(out["aged_out"], int)
        if "near" in keys:
            assert set(out["near"]) >= {"expired", "completed_promoted"}
        if "pruned_swept" in keys:
            assert isinstance(out["pruned_swept"], int)
        if "purged" in keys:
            assert out["purged"] == []


def test_tidy_age_out_lets_an_old_short_go(client, hand, memory):
    memory.set_lifetimes(short_term_seconds=60)
    old = hand.short("an old fragment", ts=1000.0)
    new = hand.short("a new fragment")
    out = client.tidy(age_out=True, near=False, sweep=False, purge=False)
    assert out["aged_out"] == 1
    assert [e["id"] for e in client.shorts()] == [new]
    assert old not in {e["id"] for e in client.shorts()}


def test_a_forgotten_core_is_purged_with_a_tombstone(client, hand):
    core_id = _approved_core(client, hand)
    keep_id = _approved_core(client, hand, "a different core about the garden that stays")
    client.forget(core_id, "asked to forget")
    assert client.memory(core_id) is not None          # nothing goes until a purge runs
    out = client.purge_flagged()
    assert set(out) == {"ok", "purged"}
    assert [t["id"] for t in out["purged"]] == [core_id]
    assert client.memory(core_id) is None
    assert client.memory(keep_id) is not None
    tombs = client.tombstones()
    assert core_id in {t["id"] for t in tombs}
    assert next(t for t in tombs if t["id"] == core_id)["reason"] == "asked to forget"
    assert client.purge_flagged()["purged"] == []       # nothing flagged any more


# ---------------------------------------------------------------- errors

def test_memory_stopped_is_unavailable_naming_method_and_route():
    c = MemoryClient(f"http://127.0.0.1:{free_port()}", timeout=2)
    with pytest.raises(MemoryUnavailable) as exc:
        c.shorts()
    e = exc.value
    assert isinstance(e, MemoryError_)
    assert e.method == "GET" and e.path == "/short" and e.status is None
    assert "GET /short" in str(e) and "did not answer" in str(e)
    with pytest.raises(MemoryUnavailable) as exc:
        c.submit_brief("x")
    assert "POST /brief" in str(exc.value)


def test_a_timeout_is_unavailable():
    srv = _Stub(delay=2.0)
    try:
        c = MemoryClient(srv.url, timeout=0.3)
        with pytest.raises(MemoryUnavailable) as exc:
            c.open_briefs()
        assert "GET /brief" in str(exc.value) and "did not answer within 0.3 s" in str(exc.value)
    finally:
        srv.close()


def test_a_404_on_a_draft_is_refused_with_status_404(client):
    with pytest.raises(MemoryRefused) as exc:
        client.draft("no-such-draft")
    e = exc.value
    assert e.status == 404 and e.method == "GET" and e.path == "/drafts/no-such-draft"
    assert "no-such-draft" in e.detail
    assert "(404)" in str(e) and "GET /drafts/no-such-draft" in str(e)
    for call in (lambda: client.review_draft("no-such-draft", [{"op": 0, "verdict": "approve"}]),
                 lambda: client.close_draft("no-such-draft"), lambda: client.draft_chain("no-such-draft")):
        with pytest.raises(MemoryRefused) as exc:
            call()
        assert exc.value.status == 404


def test_a_bad_draft_is_refused_with_memorys_reason(client):
    with pytest.raises(MemoryRefused) as exc:
        client.submit_draft({"summary": "empty", "operations": []})
    assert exc.value.status == 400 and "at least one operation" in exc.value.detail


class _Stub:
    """A tiny stdlib HTTP server: 404 for everything (an old Memory), optionally slow."""

    def __init__(self, delay: float = 0.0):
        outer_delay = delay

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _404(self):
                if outer_delay:
                    import time
                    time.sleep(outer_delay)
                data = b'{"detail":"Not Found"}'
                try:
                    self.send_response(404)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            do_GET = do_POST = do_DELETE = _404

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_memory_without_drafts_routes_says_upgrade():
    srv = _Stub()
    try:
        c = MemoryClient(srv.url, timeout=5)
        for call in (lambda: c.drafts("pending"), lambda: c.submit_draft({"operations": []})):
            with pytest.raises(MemoryRefused) as exc:
                call()
            assert exc.value.status == 404
            assert exc.value.detail == NO_DRAFTS == "Memory has no /drafts routes: upgrade Memory first"
            assert NO_DRAFTS in str(exc.value)
        with pytest.raises(MemoryRefused) as exc:      # a single draft's 404 stays a plain 404
            c.draft("abc")
        assert exc.value.detail == "Not Found"
    finally:
        srv.close()
