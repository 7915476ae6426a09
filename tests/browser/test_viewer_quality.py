"""The viewer's "Draft quality" card (issue 21) in Debian's headless Chromium: what GET /quality says, per
small model and voice card, without a page error."""
from __future__ import annotations


import requests

from tests.contract.test_replay import scripted, seed
from tests.harness.reviewer import wait_for

from tests.browser.conftest import WAIT, sync_api

expect = sync_api().expect


def test_the_quality_card_shows_each_model_and_its_columns(make_config, start_service, hand, fake_model, open_page):
    fake_model.responder = scripted
    svc = start_service(make_config(model={"url": fake_model.url, "name": "first-model"}))
    seed(hand, ("tea", "garden"))
    requests.post(svc.url + "/nudge", timeout=5)
    draft = wait_for(lambda: next(iter(hand.drafts("pending")), None), timeout=20, what="the draft")
    hand.review(draft["id"], [{"op": 0, "verdict": "approve"},
                              {"op": 1, "verdict": "deny", "critique": "too vague; say: The rose garden bloomed"}])
    page, console = open_page(svc.url)
    row = page.locator('#qualityList .quality[data-model="first-model"]')
    expect(row).to_contain_text("2 operations proposed", timeout=WAIT)
    expect(row).to_contain_text("1 approved first time")
    expect(row).to_contain_text("no voice card")
    expect(row).to_contain_text("critiques: vague (1)")
    requests.post(svc.url + "/nudge", timeout=5)           # the redraft: the card follows without a reload
    second = wait_for(lambda: next(iter(hand.drafts("pending")), None), timeout=20, what="the redraft")
    hand.approve_all(second["id"])
    requests.post(svc.url + "/nudge", timeout=5)
    expect(row).to_contain_text("1 after a redraft", timeout=WAIT)
    expect(page.locator("#qualityNote")).to_contain_text("2 drafts on record")
    assert [e for e in console.errors if e.startswith("pageerror")] == []
