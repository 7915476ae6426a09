"""Issue 16 in a real browser (Debian's headless Chromium, Playwright): the viewer's own buttons work under its
Content-Security-Policy and the Origin check; a page on another origin cannot drive the service (a no-cors
fetch, a hidden form post), cannot frame the viewer, and a rebound name (evil.example -> 127.0.0.1) gets 421.

evil.example is mapped to 127.0.0.1 inside Chromium (--host-resolver-rules), so the attacker's page is served
from a server of the test's own, as a DNS-rebinding attacker's would be.
"""
from __future__ import annotations

import http.server
import logging
import re
import threading

import pytest

from tests.browser.conftest import sync_api
from tests.harness.reviewer import wait_for

expect = sync_api().expect
EXTRA_ARGS = ["--host-resolver-rules=MAP evil.example 127.0.0.1"]   # a foreign site, served from here
CSP_WATCH = """window.__csp = [];
document.addEventListener('securitypolicyviolation',
  e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));"""


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    yield ctx
    ctx.close()


class Lines(logging.Handler):
    """The request log's lines ("POST /nudge -> 403 (1.2ms)"), to see what reached the service."""

    def __init__(self):
        super().__init__(logging.DEBUG)     # a GET that succeeded is logged at DEBUG
        self.lines: list = []

    def emit(self, record):
        self.lines.append(record.getMessage())

    def saw(self, pattern: str) -> bool:
        return any(re.search(pattern, ln) for ln in self.lines)


@pytest.fixture
def request_lines():
    h = Lines()
    logger = logging.getLogger("hippocampus.http")
    level = logger.level
    logger.addHandler(h)
    logger.setLevel(logging.DEBUG)
    yield h
    logger.removeHandler(h)
    logger.setLevel(level)


@pytest.fixture
def evil_site():
    """A page server for the attacker's pages: evil_site(html) -> its http://evil.example:<port>/ URL."""
    pages: dict = {}

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()

    def serve(html: str, path: str = "/") -> str:
        pages[path] = html
        return f"http://evil.example:{srv.server_address[1]}{path}"
    yield serve
    srv.shutdown()
    srv.server_close()
    t.join(5)


def ticks(svc) -> int:
    return (svc.runtime.board.get("ticks") or {}).get("ticks", 0)


def test_the_viewers_own_buttons_work_under_its_csp(make_config, start_service, hand, context, request_lines, crashes):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    svc = start_service(make_config(supervisor={"max_restarts": 0, "backoff_seconds": 0.05,
                                                "check_seconds": 0.05}), children=crashes.children)
    context.add_init_script(CSP_WATCH)
    page = context.new_page()
    errors: list = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    responses: list = []
    page.on("response", lambda r: responses.append(r))   # looked at afterwards, not inside the handler
    response = page.goto(svc.url + "/viewer")
    assert "frame-ancestors 'none'" in response.header_value("content-security-policy")
    expect(page.locator("body")).to_have_attribute("data-loaded", "yes")
    page.locator("#reloadBtn").click()                             # the lifted handlers, one by one
    page.wait_for_function("() => !HX.inflight")
    page.locator('.tab[data-tab="history"]').click()
    expect(page.locator('.tab[data-tab="history"]')).to_have_class(re.compile(r"\bactive\b"))
    page.locator('.tab[data-tab="overview"]').click()
    expect(page.locator('.tab[data-tab="overview"]')).to_have_class(re.compile(r"\bactive\b"))
    modal = page.locator("#tokenModal")
    page.locator("#tokenBtn").click()
    expect(modal).to_have_class(re.compile(r"\bopen\b"))
    page.locator("#tokenModal button", has_text="Cancel").click()
    expect(modal).not_to_have_class(re.compile(r"\bopen\b"))
    page.locator("#tokenBtn").click()
    page.locator("#tokenModal button", has_text="Clear").click()
    expect(modal).not_to_have_class(re.compile(r"\bopen\b"))
    # the POST buttons: same-origin requests, which the Origin check lets through
    page.locator("#sleepBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("a note in Memory asks the main model for one")
    page.locator("#tendBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("Tended")
    assert crashes.crash(svc.runtime, "ripple")
    actor = page.locator('#actorsList .actor[data-actor="ripple"]')
    expect(actor).to_have_attribute("data-state", "failed")
    actor.locator("button.restart").click()
    expect(page.locator("#actorResult")).to_contain_text("ripple is being restarted")
    own = f"http://127.0.0.1:{svc.port}"
    posts = [(r.request.url[len(own):], r.status, r.request.header_value("origin"))
             for r in responses if r.request.method == "POST"]
    # Chromium sent its Origin with each, and the guard took them
    assert posts == [("/sleep", 200, own), ("/tend", 200, own), ("/actors/ripple/restart", 202, own)], posts
    assert page.evaluate("() => window.__csp") == []
    assert errors == [], errors


def test_a_page_on_another_origin_cannot_drive_or_frame_the_service(make_config, start_service, context,
                                                                     evil_site, request_lines):
    svc = start_service(make_config(sleep={"nudge_wait_seconds": 0}))
    target = f"http://127.0.0.1:{svc.port}"
    url = evil_site(f"""<!doctype html><body>
<iframe id="framed" src="{target}/viewer"></iframe>
<form id="f" method="POST" action="{target}/actors/sleeper/restart?force=true" target="sink"></form>
<iframe name="sink"></iframe>
<script>
  window.done = fetch("{target}/nudge", {{method: "POST", mode: "no-cors", body: "x"}})
    .then(() => "sent", e => "failed: " + e);
  document.getElementById("f").submit();
</script></body>""")
    page = context.new_page()
    page.goto(url)
    assert page.evaluate("() => window.done") == "sent"          # opaque: the page cannot see the 403
    wait_for(lambda: request_lines.saw(r"^POST /nudge -> 403") and
             request_lines.saw(r"^POST /actors/sleeper/restart -> 403") and
             request_lines.saw(r"^GET /viewer -> 200"), timeout=20, what="the page's three requests")
    assert ticks(svc) == 0 and not svc.runtime.scheduler.nudge_pending()
    actors = svc.runtime.board.get("actors") or {}
    assert not actors.get("sleeper", {}).get("restarts"), actors.get("sleeper")
    # the framed viewer did not render: Chromium refused it for its frame-ancestors / X-Frame-Options
    framed = [f for f in page.frames if f.url.startswith(target + "/viewer")]
    assert all(f.locator("#sleepBtn").count() == 0 for f in framed), [f.url for f in page.frames]


def test_a_rebound_name_gets_421(make_config, start_service, context):
    svc = start_service(make_config())
    page = context.new_page()
    response = page.goto(f"http://evil.example:{svc.port}/viewer")
    assert response.status == 421
    assert "evil.example" in page.locator("body").inner_text()
    assert page.locator("#sleepBtn").count() == 0
