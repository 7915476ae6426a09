"""The viewer in a person's words (issue 32, item 5), in a real Chromium: after a sleep, a nudge and a sleep
asked for with no brief, neither tab shows a route name, a raw epoch number or an emoji, and the header's
icons are inline SVG (a box without an emoji font was what a newcomer saw for the key)."""
from __future__ import annotations

import re

import requests

from tests.browser.conftest import WAIT, sync_api
from tests.browser.person import assert_plain

expect = sync_api().expect

ROUTE = re.compile(r"\b(GET|POST|PUT|DELETE) /|/(nudge|tend|check|sleep|actors|status|queue|events)\b|<name>")
EPOCH = re.compile(r"\b1[5-9]\d{8}(\.\d+)?\b")
# the page's visible text, and each char JS counts as a pictograph (emoji) or an emoji presentation
VISIBLE = "() => document.body.innerText"
PICTOGRAPHS = r"""() => Array.from(document.body.innerText.matchAll(/[\p{Extended_Pictographic}\uFE0F]/gu),
                                    m => m[0])"""


def _plain(page) -> str:
    assert_plain(page)
    text = page.evaluate(VISIBLE)
    assert not ROUTE.search(text), ROUTE.search(text).group(0) + "\n" + text
    assert not EPOCH.search(text), EPOCH.search(text).group(0) + "\n" + text
    assert page.evaluate(PICTOGRAPHS) == [], text
    return text


def test_no_route_no_epoch_no_emoji_on_either_tab(make_config, start_service, hand, open_page):
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    svc = start_service(make_config())
    assert requests.post(svc.url + "/sleep", timeout=60).json()["asked_for_brief"] is True   # no brief: asked
    assert requests.post(svc.url + "/nudge", timeout=10).status_code in (200, 202)
    page, console = open_page(svc.url)
    expect(page.locator("body")).to_have_attribute("data-loaded", "yes", timeout=WAIT)
    page.locator("#sleepBtn").click()                                   # the button's own answer
    expect(page.locator("#actionResult")).to_contain_text("a note in Memory asks the main model for one")
    # the wake-up's facts are published on the supervisor's beat: the page says them once they are read
    expect(page.locator("body")).to_contain_text("Waiting for a brief from the main model", timeout=WAIT)
    expect(page.locator("body")).to_contain_text("nothing here wakes the main model", timeout=WAIT)   # wake-up off
    text = _plain(page)
    assert "without_brief" not in text and "submit_brief" not in text
    # the header's icons: drawn, not a character an emoji font would have to supply
    for btn in ("#tokenBtn", "#reloadBtn"):
        expect(page.locator(f"{btn} svg")).to_have_count(1)
        assert page.locator(btn).inner_text().strip() in ("Token", ""), page.locator(btn).inner_text()
    box = page.locator("#tokenBtn svg").bounding_box()
    assert box and box["width"] >= 12 and box["height"] >= 12, box
    # the history: each event in words (a nudge is "1 nudge", a brief request names its sleep's time)
    page.locator('.tab[data-tab="history"]').click()
    nudge = page.locator('#eventsList .event[data-type="nudged"]')
    expect(nudge).to_contain_text(re.compile(r"\d+ nudges?"))
    expect(page.locator('#eventsList .event[data-type="brief_requested"]').first).to_contain_text(
        re.compile(r"for the sleep due at \d\d:\d\d"))
    _plain(page)
    assert console.errors == [], console.errors
