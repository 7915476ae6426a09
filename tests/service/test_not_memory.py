"""memory.url answering something that is not SerenMemory (any web server's HTML page, 200): no 5xx, one plain
sentence, and nothing lost once the real Memory answers there again (issue 31, item 4)."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from tests.harness.reviewer import wait_for

PAGE = b"<!doctype html><html><head><title>It works!</title></head><body><h1>It works!</h1></body></html>"


class Switch:
    """One real port: a plain web server's page (html) or, switched, the real SerenMemory behind it."""

    def __init__(self, memory_url: str) -> None:
        self.mode, self.memory_url = "html", memory_url
        sw = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if sw.mode == "html":
                    status, ctype, out = 200, "text/html; charset=utf-8", PAGE
                else:
                    r = requests.request(self.command, sw.memory_url + self.path, data=body or None, timeout=30,
                                         headers={"Content-Type": self.headers.get("Content-Type") or
                                                  "application/json"})
                    status, ctype, out = r.status_code, r.headers.get("Content-Type", ""), r.content
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


SENTENCE = "answered something that is not SerenMemory (an HTML page"


def test_a_web_server_at_memory_url_is_said_plainly_and_nothing_is_lost(make_config, start_service, hand, memory):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    brief = hand.brief("we talked about the fish dream a lot")
    switch = Switch(memory.url)
    try:
        svc = start_service(make_config(memory={"url": switch.url}))
        base = svc.url
        answers = {path: requests.post(base + path, timeout=30) for path in ("/sleep", "/check", "/tend")}
        for path, r in answers.items():
            assert r.status_code < 500, (path, r.status_code, r.text)
            assert "Error" not in r.text and "unexpected" not in r.text, (path, r.text)     # no class names
        assert SENTENCE in answers["/sleep"].json()["error"], answers["/sleep"].text
        assert SENTENCE in answers["/check"].json()["error"], answers["/check"].text
        wait_for(lambda: SENTENCE in requests.get(base + "/status", timeout=10).json()["say"]["headline"],
                 timeout=20, what="the headline to say what answers at memory.url")
        headline = requests.get(base + "/status", timeout=10).json()["say"]["headline"]
        assert headline.startswith(f"Memory at {switch.url} answered something that is not SerenMemory"), headline
        assert "point the memory url setting at SerenMemory" in headline      # the key in words, for a person
        details = requests.get(base + "/status", timeout=10).json()["say"]["details"]
        assert "point memory.url at SerenMemory" in details                    # as written, for the details view
        assert hand.drafts() == [] and [b["id"] for b in hand.open_briefs()] == [brief]

        switch.mode = "memory"                  # the real Memory answers there again
        r = requests.post(base + "/check", timeout=60)
        assert r.status_code == 200 and r.json()["status"] == "sleeping", r.text
        draft = hand.draft(r.json()["sleep"]["draft_id"])
        assert draft["brief_id_used"] == brief
        cited = {s for op in draft["operations"] for s in op.get("source_short_ids") or []}
        assert cited == {s["id"] for s in hand.shorts()}, "every fragment is in the draft"
        assert requests.post(base + "/tend", timeout=60).json()["error"] is None
        wait_for(lambda: "SerenMemory" not in requests.get(base + "/status", timeout=10).json()["say"]["headline"],
                 timeout=20, what="the headline to move on once Memory is back")
    finally:
        switch.close()
