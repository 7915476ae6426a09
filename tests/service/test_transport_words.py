"""Every transport failure in plain words (issue 31, items 2 and 3): a model, a webhook and a ripple endpoint on
real sockets that refuse, close without answering, hang up mid-answer (a chunked body cut short: requests'
ChunkedEncodingError around urllib3's ProtocolError and an IncompleteRead), answer an HTML page, answer an error,
or never answer; the same for Memory; and a replay against a silent candidate ends within its one deadline."""
from __future__ import annotations

import re
import time

import pytest
import requests

from hippocampus.demo.waiting import wait_for
from hippocampus.memory import MemoryClient, MemoryError_
from hippocampus.replay.run import replay
from tests.contract.test_replay import env, first_draft, listing, scripted, seed
from tests.harness.misbehaving import Misbehaving

pytestmark = pytest.mark.timeout(120)

# An exception's class name, or what requests and urllib3 put in their messages.
RAW = re.compile(r"\b\w*(Error|Exception|Failure|Unavailable)\b|IncompleteRead|Max retries|HTTPConnectionPool|"
                 r"object at 0x")

MODEL_SAYS = {
    "close": "closed the connection without answering",
    "half": "hung up in the middle of its answer",
    "html": "answered something that is not JSON (an HTML page)",
    "error": "answered an error (HTTP 500)",
    "silent": "did not answer within 1 s (model.timeout_seconds)",
}
HOOK_SAYS = {**MODEL_SAYS, "silent": "did not answer within 1 s (notify.timeout_seconds)"}
RIPPLE_SAYS = {**MODEL_SAYS, "silent": "did not answer within 1 s (ripple.timeout_seconds)"}


def plain(text: str) -> None:
    assert not RAW.search(text), text


@pytest.mark.parametrize("mode", sorted(MODEL_SAYS))
def test_a_misbehaving_model_webhook_and_ripple_endpoint_are_worded_plainly_everywhere(mode, make_config,
                                                                                      start_service, hand):
    model = Misbehaving(mode, "/v1", only_posts=True)           # its /health answers; its chat call misbehaves
    hook, endpoint = Misbehaving(mode, "/hook"), Misbehaving(mode, "/ripple")
    try:
        hand.short("we drank green tea in the afternoon", topic="tea")
        hand.short("green tea again after lunch", topic="tea")
        brief = hand.brief("tea")
        svc = start_service(make_config(
            model={"url": model.url, "timeout_seconds": 1},
            notify={"webhook_url": hook.url, "events": ["sleep_failed"], "timeout_seconds": 1},
            ripple={"type": "endpoint", "url": endpoint.url, "events": ["sleep_failed"], "timeout_seconds": 1}))
        base = svc.url
        r = requests.post(base + "/sleep", timeout=60)
        assert r.status_code < 500, r.text
        plain(r.text)
        status = requests.get(base + "/status", timeout=10).json()
        headline, explain = status["say"]["headline"], status["explain"]
        [entry] = [e for e in requests.get(base + "/history", timeout=10).json()["entries"] if e["kind"] == "sleep"]
        says = f"the model at {model.url} {MODEL_SAYS[mode]}"
        person = says.replace(" (model.timeout_seconds)", "")      # the person's view names no config key
        kept = [("details", status["say"]["details"], says)] if person != says else []  # the key kept there
        for where, text, said in [("headline", headline, person), ("explain", explain, person),
                                  ("history", entry["error"], says)] + kept:
            assert said in text, (where, text)
            plain(text)
        assert headline.startswith("The last sleep failed at ") and "the model could not draft" in headline
        def delivered():
            [failed] = requests.get(base + "/events", params={"type": "sleep_failed"}, timeout=5).json()["entries"]
            return failed if "delivery" in failed and "ripple" in failed else None

        failed = wait_for(delivered, timeout=20, interval=0.1, what="the webhook's and the ripple's outcome")
        plain(str(failed))
        if mode != "html":          # a 200 HTML page is a 2xx: delivered, as far as a webhook can tell
            assert f"the webhook at {hook.url} {HOOK_SAYS[mode]}" in failed["delivery"]["error"], failed
            assert f"the ripple endpoint at {endpoint.url} {RIPPLE_SAYS[mode]}" in failed["ripple"]["error"], failed
        plain(requests.get(base + "/status", timeout=10).text)
        assert [b["id"] for b in hand.open_briefs()] == [brief]                 # kept for the next sleep
    finally:
        for s in (model, hook, endpoint):
            s.close()


def test_a_refused_model_is_worded_with_what_to_do(make_config, start_service, hand):
    gone = Misbehaving("close", "/v1")
    url = gone.url
    gone.close()                                        # nothing listens there now
    hand.short("we drank green tea in the afternoon", topic="tea")
    hand.short("green tea again after lunch", topic="tea")
    hand.brief("tea")
    svc = start_service(make_config(model={"url": url, "timeout_seconds": 1}))
    requests.post(svc.url + "/sleep", timeout=60)
    headline = requests.get(svc.url + "/status", timeout=10).json()["say"]["headline"]
    assert f"the model at {url} is not answering" in headline and "start it by hand" in headline, headline
    plain(headline)                                     # the gate's words: its /health refused before any call


@pytest.mark.parametrize("mode,says", [("close", "closed the connection without answering"),
                                       ("half", "hung up in the middle of its answer"),
                                       ("silent", "did not answer within 1 s"),
                                       ("error", "SerenMemory answered 500")])
def test_a_misbehaving_memory_is_worded_plainly(mode, says):
    server = Misbehaving(mode)
    try:
        with pytest.raises(MemoryError_) as got:
            MemoryClient(server.url, timeout=1).health()
    finally:
        server.close()
    assert says in str(got.value), str(got.value)
    plain(str(got.value))


def test_memory_that_hangs_up_is_worded_on_status(make_config, start_service):
    server = Misbehaving("half")
    try:
        cfg = make_config(memory={"url": server.url, "timeout_seconds": 1}, supervisor={"check_seconds": 0.05})
        svc = start_service(cfg)
        st = wait_for(lambda: (lambda st: st if "hung up" in st["explain"] else None)(
            requests.get(svc.url + "/status", timeout=10).json()), timeout=30, interval=0.1,
            what="the status to word Memory's hang-up")
    finally:
        server.close()
    assert f"Memory at {server.url} is not answering" in st["explain"], st["explain"]
    assert "hung up in the middle of its answer" in st["explain"], st["explain"]
    plain(st["explain"])
    plain(st["say"]["headline"])


# ---------------------------------------------------------------- replay: one deadline, a candidate's terms

@pytest.mark.parametrize("mode", ["silent", "trickle"])
def test_a_replay_against_a_candidate_that_never_finishes_ends_within_its_one_deadline(mode, make_ctx, hand,
                                                                                     fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand)                                          # three topics: three saved prompts
    first = first_draft(ctx, hand)
    cand = Misbehaving(mode, "/v1")
    listing(ctx, quiet=cand.url)
    try:
        t0 = time.monotonic()
        result = replay(env(ctx), first["id"], candidate="quiet", timeout_seconds=1)
        took = time.monotonic() - t0
    finally:
        cand.close()
    calls = result["candidate"]["calls"]
    assert len(calls) == 3
    assert took < 2.5, took                            # one deadline of 1 s, not 1 s per saved prompt
    deadline = "the replay's one deadline of 1 s (the timeout_seconds this replay asked for)"
    assert calls[0]["error"] == f"candidate 'quiet' at {cand.url} did not answer within {deadline}", calls[0]
    for call in calls[1:]:
        assert call["error"] == f"not sent: {deadline} had passed", call
    assert cand.requests == 1
    for call in calls:
        assert "model.url" not in call["error"] and "model.timeout_seconds" not in call["error"]
        plain(call["error"])
    assert result["candidate"]["checks"]["failed_calls"] == 3


def test_a_replay_on_a_refused_candidate_names_the_candidate_s_setting(make_ctx, hand, fake_model):
    fake_model.responder = scripted
    ctx = make_ctx(model={"url": fake_model.url})
    seed(hand, ("tea",))
    first = first_draft(ctx, hand)
    gone = Misbehaving("close", "/v1")
    url = gone.url
    gone.close()
    listing(ctx, gone={"url": url, "timeout_seconds": 7})
    [call] = replay(env(ctx), first["id"], candidate="gone")["candidate"]["calls"]
    assert call["error"] == (f"candidate 'gone' at {url} refused the connection: nothing is listening there; "
                             "start it, or set replay.candidates.gone.url"), call
    slow = Misbehaving("silent", "/v1")
    listing(ctx, slow={"url": slow.url, "timeout_seconds": 0.5})
    try:
        [call] = replay(env(ctx), first["id"], candidate="slow")["candidate"]["calls"]
    finally:
        slow.close()
    assert call["error"] == (f"candidate 'slow' at {slow.url} did not answer within the replay's one deadline of "
                             "0.5 s (replay.candidates.slow.timeout_seconds)"), call


def test_a_memory_url_without_a_scheme_is_worded_with_the_fix_on_status(make_config, start_service, memory):
    """Found: memory.url 127.0.0.1:7420 (no http://) said only 'could not be reached', with Memory up."""
    bare = memory.url.split("://", 1)[1]
    cfg = make_config(memory={"url": bare}, supervisor={"check_seconds": 0.05})
    svc = start_service(cfg)
    st = wait_for(lambda: (lambda st: st if "is not answering" in st["explain"] else None)(
        requests.get(svc.url + "/status", timeout=10).json()), timeout=30, interval=0.1,
        what="the status to word the URL")
    assert f"{bare} has no scheme, so nothing can reach it: set it to http://{bare})" in st["explain"], \
        st["explain"]
    plain(st["explain"])


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:notaport", "ftp://127.0.0.1:7420"])
def test_a_memory_url_that_cannot_be_called_is_a_memory_error_in_plain_words(url):
    with pytest.raises(MemoryError_) as got:         # before: a bare ValueError out of the client, for some
        MemoryClient(url, timeout=1).health()
    assert "is not a URL this service can call" in str(got.value), str(got.value)
    plain(str(got.value))


@pytest.mark.parametrize("url, lacks", [("http://", "has no host"), ("http://:7420", "has no host"),
                                        ("http://127.0.0.1:0", "its port 0 is not 1 to 65535")])
def test_what_a_memory_url_lacks_is_said_by_the_service_as_check_config_says_it(url, lacks):
    """/status and the log said the general 'not a URL this service can call' where check-config names the host or
    the port it lacks."""
    with pytest.raises(MemoryError_) as got:
        MemoryClient(url, timeout=1).health()
    assert lacks in str(got.value) and "http://127.0.0.1:7420" in str(got.value), str(got.value)
    plain(str(got.value))
