"""The viewer agrees with Memory (issue 41, item 2), in a real Chromium: while a page looks, a draft approved
in Memory leaves the queue card and the headline within 2 s, the model coming back turns the headline within
2 s, the main button fits the state, and every time on either tab is in the person's own clock."""
from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from tests.harness.ports import free_port
from tests.browser.conftest import WAIT, sync_api
from tests.browser.person import assert_plain, person_text

expect = sync_api().expect
FRESH_MS = 2000        # what the page shows is at most this much older than Memory while it looks


def loaded(page) -> None:
    expect(page.locator("body")).to_have_attribute("data-loaded", "yes", timeout=WAIT)


def drafted(hand, svc) -> str:
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    r = requests.post(svc.url + "/sleep", timeout=60)
    assert r.status_code == 200 and r.json()["draft_id"], r.text
    return r.json()["draft_id"]


def test_a_draft_approved_in_memory_leaves_the_queue_and_the_headline_within_2_s(make_config, start_service,
                                                                                  hand, open_page):
    svc = start_service(make_config())
    draft_id = drafted(hand, svc)
    page, console = open_page(svc.url)
    loaded(page)
    row = page.locator(f'#queueList .draft[data-draft-id="{draft_id}"]')
    expect(row).to_be_visible()
    expect(page.locator("#explainText")).to_contain_text("has waited")
    # a chain is open: Sleep now is not the main button (a second sleep would be refused)
    expect(page.locator("#sleepBtn")).not_to_have_class(re.compile(r"\bprimary\b"))
    time.sleep(1.0)        # the page has looked a while: the watches are on every beat
    hand.approve_all(draft_id)
    t0 = time.monotonic()
    expect(row).to_have_count(0, timeout=FRESH_MS)
    expect(page.locator("#explainText")).not_to_contain_text("has waited", timeout=max(1, FRESH_MS - int(
        (time.monotonic() - t0) * 1000)))
    took = time.monotonic() - t0
    assert took <= FRESH_MS / 1000 + 0.1, f"the page agreed with Memory only after {took:.1f} s"
    expect(page.locator("#queueNote")).to_have_text("Nothing waits for review.")
    expect(page.locator("#explainText")).to_contain_text("was decided in Memory")
    expect(page.locator("#tendBtn")).to_have_class(re.compile(r"\bprimary\b"))     # Tend now takes it on
    assert_plain(page)
    assert console.errors == [], console.errors


class ModelStub(BaseHTTPRequestHandler):
    """An OpenAI-compatible model list and nothing else: enough to answer."""

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            body = b'{"object": "list", "data": [{"id": "stub", "object": "model"}]}'
            self.send_response(200)
        else:
            body = b'{"error": "not here"}'
            self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def model_later():
    """A loopback port with nothing on it yet; start() puts a model there."""
    port, servers = free_port(), []

    def start():
        server = ThreadingHTTPServer(("127.0.0.1", port), ModelStub)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
    yield port, start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_the_model_coming_back_turns_the_headline_within_2_s(make_config, start_service, open_page, model_later):
    port, start_model = model_later
    svc = start_service(make_config(model={"url": f"http://127.0.0.1:{port}/v1", "timeout_seconds": 5}))
    page, console = open_page(svc.url)
    loaded(page)
    explain = page.locator("#explainText")
    expect(explain).to_contain_text("configured but not answering")
    expect(page.locator("#modelPill")).to_have_text("model: not answering")
    time.sleep(1.0)
    start_model()
    t0 = time.monotonic()
    expect(explain).not_to_contain_text("not answering", timeout=FRESH_MS)
    expect(page.locator("#modelPill")).to_have_text("model: answering", timeout=max(1, FRESH_MS - int(
        (time.monotonic() - t0) * 1000)))
    took = time.monotonic() - t0
    assert took <= FRESH_MS / 1000 + 0.1, f"the headline turned only after {took:.1f} s"
    assert "not answering" not in person_text(page)        # no card says otherwise
    assert console.errors == [], console.errors


CLOCK = re.compile(r"\b\d{1,2}:\d\d(?:\s?[AP]M)?")


@pytest.mark.parametrize("locale,twelve", [("en-US", True), ("en-GB", False)])
def test_every_time_on_either_tab_is_in_the_persons_clock(make_config, start_service, hand, open_page, locale,
                                                          twelve):
    svc = start_service(make_config())
    drafted(hand, svc)
    page, console = open_page(svc.url, locale=locale)
    loaded(page)
    expect(page.locator("#bedtimeAbs")).to_contain_text(re.compile(r"\d:\d\d"))
    overview = CLOCK.findall(person_text(page))
    page.locator('.tab[data-tab="history"]').click()
    expect(page.locator("#eventsList .event").first).to_be_visible()
    history = CLOCK.findall(person_text(page))
    assert overview and history, (overview, history)
    for t in overview + history:
        assert t.endswith("M") == twelve, f"{t!r} is not in the {locale} clock: {overview} / {history}"
    assert console.errors == [], console.errors


def test_memory_gone_keeps_what_it_last_said_as_of_when_and_nothing_can_be_pressed(make_config, start_service,
                                                                                   hand, memory, open_page):
    from tests.service.test_not_memory import Switch
    switch = Switch(memory.url)
    switch.mode = "memory"
    try:
        svc = start_service(make_config(memory={"url": switch.url, "timeout_seconds": 2}))
        draft_id = drafted(hand, svc)
        page, console = open_page(svc.url)
        loaded(page)
        row = page.locator(f'#queueList .draft[data-draft-id="{draft_id}"]')
        expect(row).to_be_visible()
        switch.mode = "html"                    # what answers at memory.url is no longer Memory
        as_of = re.compile(r"as of \d\d:\d\d [AP]M")        # in the page's en-US clock
        expect(page.locator("#queueNote")).to_contain_text("Memory is not answering: as of ")
        expect(page.locator("#queueNote")).to_contain_text(as_of)
        expect(row).to_be_visible()                          # what it last said, not an empty card
        expect(page.locator("#briefMore")).to_contain_text(as_of)
        expect(page.locator("#sleepBtn")).to_be_disabled()
        expect(page.locator("#busyNote")).to_contain_text("Memory is not answering")
        assert_plain(page)
        assert console.errors == [], console.errors
    finally:
        switch.close()
