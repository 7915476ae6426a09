"""The main button fits the state, and no id is in the person's view (issue 41, items 2 and 3), in a real
Chromium, through one service's life: idle with a brief waiting (Sleep now), a sleep running (neither, both
held, the reason beside them), a chain open on a draft under review (not Sleep now), the draft decided in
Memory (Tend now), Memory down (neither, both held). After the sleep drafted, the last-sleep card, the history
tab and /status's words carry no raw 32-hex id: the ids are in the details view."""
from __future__ import annotations

import re
import threading

import requests

from tests.browser.conftest import WAIT, sync_api
from tests.browser.person import HEX_ID, assert_plain
from tests.service.test_tend import scripted_model

expect = sync_api().expect
PRIMARY = re.compile(r"\bprimary\b")


def _main_button(page, which: str) -> None:
    """`which` (sleep, tend or none) is the page's primary button, and only it."""
    for name in ("sleep", "tend"):
        btn = expect(page.locator(f"#{name}Btn"))
        btn.to_have_class(PRIMARY) if name == which else btn.not_to_have_class(PRIMARY)


def _words(value) -> list:
    """Every string in the person's words on /status (the details view's own fields left out)."""
    if isinstance(value, dict):
        return [w for k, v in value.items() if k not in ("details", "times", "actors") for w in _words(v)]
    if isinstance(value, list):
        return [w for v in value for w in _words(v)]
    return [value] if isinstance(value, str) else []


def test_the_main_button_fits_each_state_and_no_id_shows(make_config, start_service, hand, memory, fake_model,
                                                        open_page):
    from tests.service.test_not_memory import Switch
    gate = threading.Event()
    fake_model.responder = lambda body: (gate.wait(60), scripted_model(body))[1]
    for i in range(3):
        hand.short(f"the fish dream number {i} had a very long tail", topic="fish, dreams")
    hand.brief("we talked about the fish dream a lot")
    switch = Switch(memory.url)
    switch.mode = "memory"
    try:
        svc = start_service(make_config(memory={"url": switch.url, "timeout_seconds": 2},
                                        model={"url": fake_model.url}, sleep={"tick_seconds": 3600}))
        page, console = open_page(svc.url)
        expect(page.locator("body")).to_have_attribute("data-loaded", "yes", timeout=WAIT)

        # idle, a brief waiting in Memory: Sleep now is the action
        expect(page.locator("#explainText")).to_contain_text("A brief from the main model is waiting")
        _main_button(page, "sleep")
        expect(page.locator("#sleepBtn")).to_be_enabled()

        # a sleep running (its model call held): neither button, both held, the reason beside them
        answers: list = []
        asleep = threading.Thread(target=lambda: answers.append(requests.post(svc.url + "/sleep", timeout=90)))
        asleep.start()
        try:
            expect(page.locator("#busyNote")).to_contain_text(
                re.compile(r"is running since \d\d:\d\d: wait for it to end"))
            _main_button(page, "none")
            expect(page.locator("#sleepBtn")).to_be_disabled()
            expect(page.locator("#tendBtn")).to_be_disabled()
        finally:
            gate.set()
            asleep.join(90)
        draft_id = answers[0].json()["draft_id"]
        assert draft_id and HEX_ID.fullmatch(draft_id), answers[0].text

        # a chain open on a draft under review: not Sleep now (it would be refused), nothing held
        expect(page.locator("#explainText")).to_contain_text("for review in Memory")
        _main_button(page, "none")
        expect(page.locator("#sleepBtn")).to_be_enabled()
        # the last-sleep card after a sleep that drafted: in words, its id in the details view only
        expect(page.locator("#lastSleepWhat")).to_have_text("Drafted")
        assert_plain(page)
        expect(page.locator("#queueList details").first).to_contain_text(draft_id)     # the id: the details'

        said = _words(requests.get(svc.url + "/status", timeout=10).json()["say"])
        assert not [w for w in said if HEX_ID.search(w)], [w for w in said if HEX_ID.search(w)]
        # the history: the sleep that drafted, in words, no id
        page.locator('.tab[data-tab="history"]').click()
        expect(page.locator('#eventsList .event[data-type="draft_submitted"]').first).to_be_visible()
        assert_plain(page)
        page.locator('.tab[data-tab="overview"]').click()

        # the draft decided in Memory (an operation denied): Tend now takes it on
        ops = hand.draft(draft_id)["operations"]
        hand.review(draft_id, [{"op": op["index"], "verdict": "deny", "critique": "not quite"} for op in ops])
        expect(page.locator("#explainText")).to_contain_text("was decided in Memory")
        _main_button(page, "tend")

        # Memory down: neither, both held, and why
        switch.mode = "html"
        expect(page.locator("#busyNote")).to_have_text("Memory is not answering: nothing can start until it does.")
        _main_button(page, "none")
        expect(page.locator("#sleepBtn")).to_be_disabled()
        expect(page.locator("#tendBtn")).to_be_disabled()
        assert_plain(page)
        assert console.errors == [], console.errors
    finally:
        gate.set()
        switch.close()


def test_a_tend_whose_redraft_the_model_could_not_write_is_a_bad_row_in_the_history(
        make_config, start_service, hand, fake_model, open_page):
    """Found: the History tab's row for a tend whose redraft the small model could not write wore the calm,
    neutral badge (no error, nothing closed or resubmitted), while /status and Tend now's answer call it a
    failure (level bad): the row is bad, as the tend's own words say."""
    from tests.reliability.helpers import Delays, review_pending, seed
    from tests.reliability.test_model_misbehaving import FAILURES

    fake_model.responder = Delays().responder
    svc = start_service(make_config(model={"url": fake_model.url, "timeout_seconds": 1, "max_tokens": 64}))
    seed(hand)
    assert requests.post(svc.url + "/sleep", timeout=60).json()["draft_id"]
    review_pending(hand)
    reply, _ = FAILURES["invalid"]
    fake_model.responder = lambda body: dict(reply)
    tended = requests.post(svc.url + "/tend", timeout=60).json()
    assert tended["model_failures"] and not tended.get("error"), tended
    page, _ = open_page(svc.url)
    page.locator('.tab[data-tab="history"]').click()
    row = page.locator('#runsList .run[data-kind="tend"]').first
    expect(row).to_contain_text("could not write")
    expect(row.locator(".badge")).to_have_class(re.compile(r"\bbad\b"))
