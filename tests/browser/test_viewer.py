"""The window in a real browser: Debian's headless Chromium driven by Playwright.

The whole service runs in-process against the real SerenMemory; the page is
loaded from /viewer and clicked like a person would. Screenshots land in
tests/artifacts/ (gitignored).
"""
from __future__ import annotations

import re
from pathlib import Path

import requests

from tests.browser.conftest import WAIT, sync_api
from tests.browser.person import assert_plain

expect = sync_api().expect
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


def loaded(page) -> None:
    expect(page.locator("body")).to_have_attribute("data-loaded", "yes", timeout=WAIT)


def seed_fragments(hand, topic="fish, dreams", n=3):
    for i in range(n):
        hand.short(f"the fish dream number {i} had a very long tail", topic=topic)


def test_page_loads_clean_and_answers_the_three_questions(make_config, start_service, hand, open_page):
    seed_fragments(hand)
    hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config())
    r = requests.post(svc.url + "/sleep", timeout=60)
    assert r.status_code == 200 and r.json()["draft_id"], r.text
    draft_id = r.json()["draft_id"]
    page, console = open_page(svc.url)
    loaded(page)
    # did the sleep run, and when is the next one
    expect(page.locator("#lastSleepWhat")).to_have_text("Drafted")
    expect(page.locator("#lastSleepWhen")).to_contain_text("drafted 1 operation")
    expect(page.locator("#bedtimeRel")).to_have_text(re.compile(r"^(in \d|Now)"))
    expect(page.locator("#bedtimeAbs")).to_contain_text(re.compile(r"\d\d:\d\d"))
    expect(page.locator("#briefWhat")).to_have_text("In use")            # the brief that opened the chain
    expect(page.locator("#tickWhat")).to_have_text("When asked")
    # what is waiting for review
    row = page.locator(f'#queueList .draft[data-draft-id="{draft_id}"]')
    expect(row).to_be_visible()
    expect(row).to_contain_text("1 operation")
    expect(row).to_contain_text("new memory")           # the kind in words; new_core is the details' word
    expect(page.locator("#queueCount")).to_have_text("1")
    # what broke: the explanation, as /status words it
    explain = requests.get(svc.url + "/status", timeout=10).json()["explain"]
    assert explain.startswith("A draft (1 operation) has waited ")      # the narrator's headline; no id in it
    expect(page.locator("#explainText")).to_have_text(re.compile("^" + re.escape(explain.split(" has waited ")[0])))
    expect(page.locator("#memPill")).to_have_text("memory: reachable")
    expect(page.locator("#modelPill")).to_have_text("model: mechanical")
    expect(page.locator('#actorsList .actor[data-state="running"]')).to_have_count(12)   # seven, the four watches and the replay actor (issue 42)
    # the wake-up line and the model card's rows: the narrator's words, laid out as they come
    say = requests.get(svc.url + "/status", timeout=10).json()["say"]
    assert say["wakeup"].startswith("Wake-up: off: nothing here wakes the main model"), say["wakeup"]
    expect(page.locator("#wakeupLine")).to_have_text(say["wakeup"])
    rows = say["cards"]["model"]["rows"]
    assert rows[-1] == ["voice card", "off (opt-in)", ""], rows
    expect(page.locator("#modelList dt")).to_have_text([k for k, _, _ in rows])
    expect(page.locator("#modelList dd")).to_have_text([v for _, v, _ in rows])
    # the history tab: the sleep and its events, newest first
    page.locator('.tab[data-tab="history"]').click()
    expect(page.locator('#runsList .run[data-kind="sleep"]').first).to_contain_text("drafted 1 operation")
    submitted = page.locator('#eventsList .event[data-type="draft_submitted"]')
    expect(submitted).to_contain_text("1 operation")
    assert draft_id[:8] not in submitted.inner_text()       # the id is the details' and /events', not the person's
    types = page.locator("#eventsList .event").evaluate_all("els => els.map(e => e.dataset.type)")
    assert types.index("sleep_done") < types.index("draft_submitted"), types
    # a few refreshes later: still no errors, and the queue row is the same node (updated in place)
    page.locator('.tab[data-tab="overview"]').click()
    text = page.locator("#explainText").element_handle()
    row_node = row.element_handle()
    for _ in range(2):
        page.evaluate("() => hxRefresh(true)")
        page.wait_for_function("() => !HX.inflight")
    expect(page.locator("#explainText")).to_have_text(re.compile("^" + re.escape(explain.split(" has waited ")[0])))
    assert page.evaluate("(el) => el.isConnected", row_node)
    assert page.evaluate("(el) => el.isConnected", text)
    assert draft_id not in assert_plain(page)              # the id is the details' (one per queue row)
    row.locator("details summary").click()
    expect(row.locator("details")).to_contain_text(draft_id)
    assert console.errors == [], console.errors


def test_sleep_now_without_a_brief_asks_for_one(make_config, start_service, hand, open_page):
    seed_fragments(hand)
    svc = start_service(make_config())
    page, console = open_page(svc.url)
    loaded(page)
    page.locator("#sleepBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("a note in Memory asks the main model for one")
    expect(page.locator("#briefWhat")).to_have_text("Wanted")
    expect(page.locator("#explainText")).to_contain_text("Waiting for a brief from the main model")
    assert_plain(page)
    assert hand.drafts("pending") == []
    assert console.errors == [], console.errors


def test_sleep_now_with_a_brief_drafts_and_the_queue_shows_it(make_config, start_service, hand, open_page):
    seed_fragments(hand)
    hand.brief("we talked about the fish dream a lot")
    svc = start_service(make_config())
    page, console = open_page(svc.url)
    loaded(page)
    expect(page.locator("#queueNote")).to_have_text("Nothing waits for review.")
    page.locator("#sleepBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("Drafted 1 operation for review")
    pending = hand.drafts("pending")
    assert len(pending) == 1
    expect(page.locator(f'#queueList .draft[data-draft-id="{pending[0]["id"]}"]')).to_be_visible()
    expect(page.locator("#lastSleepWhat")).to_have_text("Drafted")
    # a second click: one cycle at a time, the open chain refuses it in plain words
    page.locator("#sleepBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("Nothing started: a chain is open")
    page.locator("#tendBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("Tended: 1 draft still under review")
    assert_plain(page)
    assert console.errors == [], console.errors


def test_a_failed_actor_gets_a_restart_button_that_brings_it_back(make_config, start_service, open_page, crashes):
    svc = start_service(make_config(supervisor={"max_restarts": 0, "backoff_seconds": 0.05, "check_seconds": 0.05}),
                        children=crashes.children)
    page, console = open_page(svc.url)
    loaded(page)
    # the parts' names are the details' words: closed until one is down
    expect(page.locator('#actorsList .actor[data-actor="ripple"][data-state="running"]')).to_be_attached()
    expect(page.locator("#detailsView")).not_to_have_attribute("open", "")
    assert crashes.crash(svc.runtime, "ripple")
    actor = page.locator('#actorsList .actor[data-actor="ripple"]')
    expect(actor).to_have_attribute("data-state", "failed")
    expect(actor).to_contain_text("injected crash in ripple")
    expect(page.locator("#explainCard")).to_have_class(re.compile(r"\bbad\b"))
    expect(page.locator("#explainText")).to_contain_text("The part that wakes the main model crashed too often")
    expect(page.locator("#detailsView")).to_have_attribute("open", "")
    assert_plain(page)                  # the parts' names are in the details, opened: not in the headline
    button = actor.locator("button.restart")
    expect(button).to_have_text("Restart")
    button.click()
    expect(actor).to_have_attribute("data-state", "running")
    expect(actor.locator("button.restart")).to_have_count(0)
    expect(page.locator("#actorResult")).to_contain_text("ripple is being restarted")
    expect(page.locator("#explainCard")).not_to_have_class(re.compile(r"\bbad\b"))
    assert requests.get(svc.url + "/actors", timeout=10).json()["actors"]["ripple"]["state"] == "running"
    assert console.errors == [], console.errors


def test_with_a_bearer_the_page_asks_once_then_works(make_config, start_service, open_page):
    svc = start_service(make_config(server={"bearer_token": "s3cret"}))
    assert requests.get(svc.url + "/status", timeout=10).status_code == 401
    page, _ = open_page(svc.url)
    modal = page.locator("#tokenModal")
    expect(modal).to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator("#explainLabel")).to_have_text("Needs the bearer token")
    page.locator("#tokenInput").fill("s3cret")
    page.locator("#tokenModal button.primary").click()
    expect(modal).not_to_have_class(re.compile(r"\bopen\b"))
    loaded(page)
    expect(page.locator("#memPill")).to_have_text("memory: reachable")
    expect(page.locator("#explainText")).to_contain_text("no brief")      # the narrator's headline
    assert_plain(page)
    assert page.evaluate("() => localStorage.getItem('seren_token')") == "s3cret"
    # a reload keeps the token: it never asks again
    page.reload()
    loaded(page)
    expect(page.locator("#bedtimeRel")).not_to_have_text("…")
    page.locator("#reloadBtn").click()
    loaded(page)
    assert "open" not in (modal.get_attribute("class") or "")
    # the action buttons carry it too
    page.locator("#sleepBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("a note in Memory asks the main model for one")


def test_a_cancelled_token_prompt_does_not_nag(make_config, start_service, open_page):
    svc = start_service(make_config(server={"bearer_token": "s3cret"}))
    page, _ = open_page(svc.url)
    modal = page.locator("#tokenModal")
    expect(modal).to_have_class(re.compile(r"\bopen\b"))
    page.keyboard.press("Escape")
    expect(modal).not_to_have_class(re.compile(r"\bopen\b"))
    page.locator("#reloadBtn").click()
    expect(page.locator("#explainText")).to_contain_text("Press Token (top right)")
    page.wait_for_function("() => !HX.inflight")
    assert "open" not in (modal.get_attribute("class") or "")
    # a wrong token is refused and the prompt comes back once
    page.locator("#tokenBtn").click()
    page.locator("#tokenInput").fill("wrong")
    page.locator("#tokenInput").press("Enter")
    expect(modal).to_have_class(re.compile(r"\bopen\b"))
    expect(page.locator("#explainText")).to_contain_text("refused the saved token")
    page.locator("#tokenInput").fill("s3cret")
    page.locator("#tokenInput").press("Enter")
    loaded(page)
    expect(page.locator("#memPill")).to_have_text("memory: reachable")


def _no_sideways_scroll(page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth")
    inner = page.evaluate("() => window.innerWidth")
    assert width <= inner, f"the page scrolls sideways: {width} > {inner}"


def shot(page, name: str) -> None:
    # bytes, written here: Playwright's own path= writes from an executor thread that outlives the test
    (ARTIFACTS / name).write_bytes(page.screenshot(full_page=True))


def test_screenshots_desktop_and_phone(make_config, start_service, hand, open_page, crashes):
    seed_fragments(hand)
    seed_fragments(hand, topic="garden, roses")
    hand.short("a one-off about the weather", topic="weather")
    hand.brief("the fish dream and the roses came up a lot")
    svc = start_service(make_config(supervisor={"max_restarts": 0, "backoff_seconds": 0.05, "check_seconds": 0.05}),
                        children=crashes.children)
    r = requests.post(svc.url + "/sleep", timeout=60)
    assert r.json().get("draft_id"), r.text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page, console = open_page(svc.url, width=1280, height=900)
    loaded(page)
    expect(page.locator("#queueList .draft")).to_have_count(1)
    page.locator("#tendBtn").click()
    expect(page.locator("#actionResult")).to_contain_text("Tended")
    expect(page.locator("#lastTendWhat")).to_have_text("Quiet")
    _no_sideways_scroll(page)
    shot(page, "viewer-desktop.png")
    page.locator('.tab[data-tab="history"]').click()
    expect(page.locator("#eventsList .event").first).to_be_visible()
    shot(page, "viewer-desktop-history.png")
    assert_plain(page)

    phone, phone_console = open_page(svc.url, width=375, height=812, scale=2)
    loaded(phone)
    expect(phone.locator("#queueList .draft")).to_have_count(1)
    _no_sideways_scroll(phone)
    shot(phone, "viewer-375.png")
    phone.locator('.tab[data-tab="history"]').click()
    expect(phone.locator("#eventsList .event").first).to_be_visible()
    _no_sideways_scroll(phone)
    shot(phone, "viewer-375-history.png")

    # when it broke: a failed actor, in red, with its Restart button
    phone.locator('.tab[data-tab="overview"]').click()
    assert crashes.crash(svc.runtime, "ripple")
    expect(phone.locator('#actorsList .actor[data-actor="ripple"] button.restart')).to_be_visible()
    expect(phone.locator("#explainLabel")).to_have_text("Something is wrong")
    assert_plain(phone)
    _no_sideways_scroll(phone)
    shot(phone, "viewer-375-broken.png")
    names = ("viewer-desktop.png", "viewer-desktop-history.png", "viewer-375.png", "viewer-375-history.png",
             "viewer-375-broken.png")
    for name in names:
        assert (ARTIFACTS / name).stat().st_size > 10_000, name
    assert console.errors == [] and phone_console.errors == [], console.errors + phone_console.errors


def test_memory_down_is_a_message_not_an_error(make_config, start_service, open_page):
    svc = start_service(make_config(memory={"url": "http://127.0.0.1:9", "timeout_seconds": 1}))
    page, console = open_page(svc.url)
    loaded(page)
    expect(page.locator("#memPill")).to_have_text("memory: unreachable")
    expect(page.locator("#memPill")).to_have_class(re.compile(r"\bhot\b"))
    expect(page.locator("#queueNote")).to_contain_text("Memory is not answering")
    expect(page.locator("#explainLabel")).to_have_text("Something is wrong")
    expect(page.locator("#explainText")).to_contain_text("is not answering")
    # nothing can start: neither button can be pressed, and the words beside them say why
    expect(page.locator("#sleepBtn")).to_be_disabled()
    expect(page.locator("#tendBtn")).to_be_disabled()
    expect(page.locator("#sleepBtn")).not_to_have_class(re.compile(r"\bprimary\b"))
    expect(page.locator("#busyNote")).to_have_text("Memory is not answering: nothing can start until it does.")
    assert_plain(page)
    assert console.errors == [], console.errors
