"""ModelLifecycle through the Observatory (model.lifecycle.observatory_service): a stand-in Observatory answers
ensure and stop; the model's health is the rig's port. Split from test_lifecycle.py, whose rig it uses."""
from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hippocampus.model.client import ModelUnavailable
from hippocampus.model.lifecycle import LOADING_STOPPED
from hippocampus.model.observatory import observatory as observatory_call
from tests.unit.test_lifecycle import rig, wait_until  # noqa: F401 - the rig fixture

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and the sh wrapper are POSIX")


class Observatory:
    def __init__(self):
        self.calls: list = []
        self.answer: dict = {"ok": True, "ready": True, "started": True, "already_running": False}
        self.up = False
        self.hold = None            # a threading.Event: an ensure answers only once it is set (a slow load)
        self.stop_fails = 0         # the next stops answered 503 (the Observatory restarting), the model left up
        self.stop_hold = None       # a threading.Event: a stop answers only once it is set (a hung Observatory)
        self.stop_refusals = 0      # the next stops answered 200 {"ok": false, "error"}, the model left up
        obs = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, body):
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                self._send(200 if obs.up else 503, {})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                obs.calls.append((self.path, self.headers.get("Authorization"), body))
                if self.path.endswith("/ensure"):
                    if obs.hold is not None:
                        obs.hold.wait(30)
                    obs.up = obs.up or bool(obs.answer.get("ready"))
                    self._send(200, obs.answer)
                elif self.path.endswith("/stop") and obs.stop_hold is not None and not obs.stop_hold.wait(30):
                    self._send(504, {"error": "hung"})
                elif self.path.endswith("/stop") and obs.stop_refusals:
                    obs.stop_refusals -= 1
                    self._send(200, {"ok": False, "error": "seren-systemctl: stopping seren-small-model failed"})
                elif self.path.endswith("/stop") and obs.stop_fails:
                    obs.stop_fails -= 1
                    self._send(503, {"error": "the Observatory is restarting"})
                elif self.path.endswith("/stop"):
                    obs.up = False
                    self._send(200, {"ok": True})
                else:
                    self._send(404, {"error": "no"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


@pytest.fixture
def observatory():
    o = Observatory()
    yield o
    if o.hold is not None:
        o.hold.set()
    if o.stop_hold is not None:
        o.stop_hold.set()
    o.httpd.shutdown()
    o.httpd.server_close()


def _via(rig, obs, **kw):
    return rig.make(url=obs.url + "/v1", server="", model_path="", manage=True, observatory_url=obs.url,
                    observatory_service="small-model", observatory_token="s3cret", **kw)


def test_observatory_ensure_then_stop(rig, observatory):
    lc = _via(rig, observatory)
    assert lc.snapshot()["via"] == "observatory"
    lc.ensure()
    path, auth, body = observatory.calls[0]
    assert path == "/api/v1/service/small-model/ensure" and auth == "Bearer s3cret"
    assert body == {"holder": "seren-hippocampus", "reason": body["reason"], "wait_seconds": 10.0}
    assert lc.snapshot()["started_by_us"] is True and rig.kinds("model_started")[0]["how"] == "observatory"
    lc.tick(chain_open=False)
    assert observatory.calls[-1][0] == "/api/v1/service/small-model/stop"
    assert rig.kinds("model_stopped")[0]["why"] == "the cycle is over"


def test_observatory_already_running_is_borrowed(rig, observatory):
    observatory.answer = {"ok": True, "ready": True, "started": False, "already_running": True}
    lc = _via(rig, observatory)
    lc.ensure()
    lc.tick(chain_open=False)
    assert lc.snapshot()["started_by_us"] is False
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure"]


def test_observatory_refusal_fails_with_its_error(rig, observatory):
    observatory.answer = {"ok": False, "ready": False, "error": "llama did not start: model.gguf: no such file"}
    lc = _via(rig, observatory)
    with pytest.raises(ModelUnavailable, match="llama did not start: model.gguf: no such file"):
        lc.ensure()
    assert len(rig.kinds("model_start_failed")) == 1 and lc.snapshot()["state"] == "failed"


def test_a_restart_while_the_observatory_model_loads_keeps_it_ours_and_stops_it(rig, observatory):
    # the previous run had the Observatory start the model and died while it loaded (its /health answers 503)
    lc = _via(rig, observatory, persisted={"started_by_us": True, "how": "observatory"})
    lc.adopt()
    assert lc.snapshot()["started_by_us"] is True
    observatory.answer = {"ok": True, "ready": True, "started": False, "already_running": True}
    lc.ensure()                                    # the Observatory says it was running already: it is still ours
    lc.tick(chain_open=False)
    assert observatory.calls[-1][0] == "/api/v1/service/small-model/stop"
    assert rig.kinds("model_stopped")[0]["why"] == "the cycle is over"


@pytest.mark.parametrize("before, calls", [
    ("nothing", ["ensure", "stop"]),     # nothing answered before it was asked: the start it asked for is called off
    ("loading", ["ensure"]),             # someone's server was loading (503): theirs, never stopped
])
def test_a_stop_while_the_observatory_loads_the_model_ends_the_wait_at_once(rig, observatory, before, calls):
    observatory.hold = threading.Event()           # the Observatory takes its time loading the model
    health = {"health_url": f"http://127.0.0.1:{rig.port}/health"} if before == "nothing" else {}
    lc = _via(rig, observatory, ready_timeout_seconds=60, **health)
    out: dict = {}

    def start():
        try:
            lc.ensure()
        except ModelUnavailable as exc:
            out["error"] = str(exc)

    starting = threading.Thread(target=start, daemon=True)
    starting.start()
    assert wait_until(lambda: observatory.calls), "the Observatory was never asked"
    asked_at = time.monotonic()
    threading.Thread(target=lc.shutdown, daemon=True).start()     # the service's stop
    starting.join(10)
    took = time.monotonic() - asked_at
    assert not starting.is_alive() and took < 2.0, f"the stop waited {took:.1f} s on the Observatory's answer"
    assert out["error"] == LOADING_STOPPED and lc.snapshot()["state"] == "stopped"
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == calls


@pytest.mark.parametrize("now", ["command", "unmanaged"])
def test_a_model_the_observatory_started_is_stopped_once_the_config_moves_away(rig, observatory, now):
    # a run in Observatory mode had it start the model, then died without stopping it (killed, say)
    first = _via(rig, observatory)
    first.ensure()
    assert observatory.up and first.snapshot()["started_by_us"] is True
    # the next run's config no longer names the Observatory: the model it started for us is no longer wanted
    then = rig.make(persisted=rig.saves[-1]) if now == "command" else \
        rig.make(persisted=rig.saves[-1], server="", model_path="", manage=False)
    then.adopt()
    assert observatory.calls[-1][0] == "/api/v1/service/small-model/stop" and not observatory.up
    assert rig.kinds("model_stopped")[0]["how"] == "observatory"
    assert rig.saves[-1]["started_by_us"] is False and then.snapshot()["started_by_us"] is False


def test_a_model_the_observatory_started_that_cannot_be_stopped_is_said_to_be_left_running(rig, observatory,
                                                                                            caplog):
    first = _via(rig, observatory)
    first.ensure()
    observatory.httpd.shutdown()            # the Observatory does not answer when the next run starts
    observatory.httpd.server_close()
    then = rig.make(persisted=rig.saves[-1])
    then.adopt()
    said = then.snapshot()["last_error"]
    assert "small-model" in said and "left running" in said and f"{observatory.url}/api/v1/service/small-model/stop" \
        in said, said
    assert said in caplog.text


def test_a_stop_the_observatory_refuses_keeps_the_model_ours_and_is_asked_again(rig, observatory):
    lc = _via(rig, observatory)
    lc.ensure()
    observatory.stop_fails = 1
    lc.tick(chain_open=False)                       # the cycle is over: the stop is refused, the model still up
    assert observatory.up and lc.snapshot()["started_by_us"] is True
    assert rig.saves[-1]["started_by_us"] is True   # a restart of the service still knows it is ours
    assert "the Observatory is restarting" in lc.snapshot()["last_error"] and rig.kinds("model_stopped") == []
    lc.tick(chain_open=False)                       # the next tick asks again
    assert not observatory.up and [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop", "stop"]
    assert rig.kinds("model_stopped")[0]["why"] == "the cycle is over" and lc.snapshot()["started_by_us"] is False


def test_a_keep_warm_stop_the_observatory_refuses_is_asked_again_a_keep_warm_later_not_every_beat(rig, observatory):
    lc = _via(rig, observatory, keep_warm_seconds=300)
    lc.ensure()
    observatory.stop_fails = 1
    rig.clock.advance(301)
    lc.tick(chain_open=True)                        # idle past the keep-warm: the stop is refused
    for _ in range(5):
        lc.tick(chain_open=True)                    # the beats after it (every 0.5 s) ask nothing
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop"] and observatory.up
    rig.clock.advance(301)
    lc.tick(chain_open=True)
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop", "stop"] and not observatory.up
    assert rig.kinds("model_stopped")[0]["idle_seconds"] >= 300


def test_the_services_stop_waits_a_few_seconds_on_a_hung_observatory_and_keeps_the_model_for_the_next_run(
        rig, observatory):
    lc = _via(rig, observatory)
    lc.ensure()
    observatory.stop_hold = threading.Event()       # the Observatory takes the stop and never answers
    t0 = time.monotonic()
    lc.shutdown()                                   # the service's stop (systemd kills it 10 s on)
    lc.shutdown()                                   # and again from the runtime's stop: not asked twice
    took = time.monotonic() - t0
    assert took < 8, f"the stop waited {took:.1f} s on the Observatory"
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop"]
    assert lc.snapshot()["started_by_us"] is True and rig.saves[-1]["started_by_us"] is True    # the next run adopts it
    assert "did not stop the model" in lc.snapshot()["last_error"] and rig.kinds("model_stopped") == []


def test_an_observatory_answer_is_read_no_further_than_its_cap(rig):
    """Bounded like every call out: a 150 MB answer is stopped at 64 KB, never held whole."""
    from hippocampus import outbound
    from tests.harness.misbehaving import Misbehaving

    peer = Misbehaving("huge")
    try:
        lc = rig.make(url=peer.url + "/v1", server="", model_path="", manage=True, observatory_url=peer.url,
                      observatory_service="small-model")
        with pytest.raises(outbound.AnswerTooLarge, match="passed 64 KB"):
            observatory_call(lc.lc, "stop", "done drafting")
    finally:
        peer.close()


def test_a_hung_observatory_ensure_fails_the_start_within_the_ready_timeout_and_holds_the_retry(rig, observatory):
    """The Observatory takes the ensure and never answers: the start waits model.lifecycle.ready_timeout_seconds
    (plus a few seconds for the answer), not a minute and a half more, then fails naming the Observatory and the
    time, and the next sleep within retry_after_seconds does not ask again."""
    observatory.hold = threading.Event()           # the ensure is never answered
    lc = _via(rig, observatory, ready_timeout_seconds=2)
    t0 = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        lc.ensure()
    took = time.monotonic() - t0
    assert took < 9, f"the start waited {took:.1f} s on the hung Observatory (ready_timeout_seconds is 2)"
    said = str(caught.value)
    assert "the Observatory" in said and observatory.url in said and "did not answer within 7 s" in said, said
    assert "model.lifecycle.ready_timeout_seconds" in said, said
    assert lc.snapshot()["state"] == "failed" and rig.kinds("model_start_failed")[0]["error"] == said
    with pytest.raises(ModelUnavailable, match="the next attempt is in"):
        lc.ensure()
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure"]


def test_an_ensure_that_gives_up_before_the_model_is_ready_asks_the_observatory_to_stop_the_model_it_started(
        rig, observatory):
    """The Observatory started the model for us but it was not ready within wait_seconds: the model, which may come
    up after we stopped waiting, is ours, so it is stopped at once rather than left holding the card as somebody
    else's."""
    observatory.answer = {"ok": False, "ready": False, "started": True, "already_running": False,
                          "error": "small-model did not become ready within 10 s"}
    lc = _via(rig, observatory)
    with pytest.raises(ModelUnavailable, match="did not become ready within 10 s") as failed:
        lc.ensure()
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop"]
    assert "it was asked to stop" in str(failed.value) and lc.snapshot()["started_by_us"] is False


def test_a_model_the_observatory_did_not_stop_after_a_failed_ensure_stays_ours_and_is_stopped_later(
        rig, observatory):
    """That stop refused (the Observatory restarting): the model stays ours, so once it is up, the end of the cycle
    stops it; never borrowed."""
    observatory.answer = {"ok": True, "ready": False, "started": True, "already_running": False}
    observatory.stop_fails = 1
    lc = _via(rig, observatory)
    with pytest.raises(ModelUnavailable, match="did not report ready"):
        lc.ensure()
    assert lc.snapshot()["started_by_us"] is True
    observatory.up = True               # it came up after we stopped waiting
    lc.ensure()                         # the next sleep finds it up: ours, not borrowed
    assert lc.snapshot()["started_by_us"] is True
    lc.tick(chain_open=False)
    assert observatory.calls[-1][0].endswith("/stop") and observatory.up is False
    assert rig.kinds("model_stopped")[-1]["why"] == "the cycle is over"


def test_an_ensure_that_never_answers_after_we_asked_for_a_start_stops_the_model_it_may_have_started(
        rig, observatory):
    """Nothing answered the model's health when we asked for a start, and the ensure did not answer within
    ready_timeout_seconds + 5 s: the model it may have started is ours, and asked to stop at once."""
    from tests.harness.memory_server import free_port

    observatory.hold = threading.Event()
    lc = _via(rig, observatory, ready_timeout_seconds=0.5, health_url=f"http://127.0.0.1:{free_port()}/health")
    with pytest.raises(ModelUnavailable, match="did not answer within 5.5 s") as failed:
        lc.ensure()
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop"]
    assert "it was asked to stop" in str(failed.value) and lc.snapshot()["started_by_us"] is False


def test_a_model_that_never_answers_after_the_ensure_and_that_the_observatory_did_not_stop_stays_ours(
        rig, observatory):
    """The ensure said ready but the model's health never answered within ready_timeout_seconds, and the stop then
    asked of the Observatory was refused: the model stays ours (never borrowed), and the end of the cycle stops it."""
    from tests.harness.memory_server import free_port

    observatory.stop_fails = 1
    lc = _via(rig, observatory, ready_timeout_seconds=0.5, health_url=f"http://127.0.0.1:{free_port()}/health")
    with pytest.raises(ModelUnavailable, match="did not answer .* within 0.5 s") as failed:
        lc.ensure()
    assert "the Observatory did not stop it" in str(failed.value) and lc.snapshot()["started_by_us"] is True
    lc.tick(chain_open=False)
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls] == ["ensure", "stop", "stop"]
    assert lc.snapshot()["started_by_us"] is False and rig.kinds("model_stopped")[-1]["why"] == "the cycle is over"


def test_a_stop_while_the_model_we_asked_for_loads_and_a_hung_observatory_keeps_it_ours_for_the_next_run(
        rig, observatory):
    """The service's stop comes while the Observatory loads the model we asked for, and its stop is never answered:
    the model may come up after we are gone, so the state file keeps it ours (the next run adopts and stops it),
    never left for somebody else's."""
    observatory.hold, observatory.stop_hold = threading.Event(), threading.Event()
    lc = _via(rig, observatory, ready_timeout_seconds=60, health_url=f"http://127.0.0.1:{rig.port}/health")
    starting = threading.Thread(target=lambda: pytest.raises(ModelUnavailable, lc.ensure), daemon=True)
    starting.start()
    assert wait_until(lambda: observatory.calls), "the Observatory was never asked"
    lc.shutdown()                                   # the service's stop
    starting.join(10)
    assert [c[0].rsplit("/", 1)[1] for c in observatory.calls][:2] == ["ensure", "stop"]
    assert rig.saves and rig.saves[-1]["started_by_us"] is True and rig.saves[-1]["how"] == "observatory", rig.saves


def test_a_stop_the_observatory_answers_not_ok_keeps_the_model_ours_and_says_why(rig, observatory):
    """The Observatory answers the stop 200 {"ok": false, "error"}: the model still runs, so it is not taken as
    stopped (no model_stopped, never forgotten): it stays ours, /status says why, and it is asked again later."""
    lc = _via(rig, observatory)
    lc.ensure()
    observatory.stop_refusals = 1
    lc.tick(chain_open=False)
    assert observatory.up is True and rig.kinds("model_stopped") == []
    snap = lc.snapshot()
    assert snap["started_by_us"] is True and "stopping seren-small-model failed" in snap["last_error"], snap
    lc.tick(chain_open=False)                       # the next tick asks again
    assert observatory.up is False and rig.kinds("model_stopped")[-1]["why"] == "the cycle is over"
