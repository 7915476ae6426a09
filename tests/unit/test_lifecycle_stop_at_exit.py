"""The model's stop at the service's stop (systemd's TimeoutStopSec=10) is bounded; what it does not see stopped
stays on the record and the next run stops it. Real processes: the stand-in llama-server, a stop command that
hangs (a `docker stop` on a stuck container), a stand-in Observatory."""
from __future__ import annotations

import logging
import os
import sys
import time

import pytest

from tests.unit.test_lifecycle import gone, rig, wait_until  # noqa: F401 - the rig fixture
from tests.unit.test_lifecycle_observatory import observatory  # noqa: F401 - the stand-in Observatory fixture

pytestmark = pytest.mark.skipif(os.name == "nt", reason="process groups and the sh wrapper are POSIX")


def _script(rig, name: str, body: str) -> str:
    path = rig.tmp / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_hung_stop_command_at_the_services_stop_is_given_seconds_and_the_next_run_stops_the_model(rig, caplog):
    caplog.set_level(logging.INFO)
    hung = _script(rig, "stop-hung", "sleep 120")           # the stop command never ends
    lc = rig.make(stop=hung, stop_grace_seconds=20.0)
    lc.ensure()
    pid = lc.pid
    t0 = time.monotonic()
    lc.shutdown()                                          # the service's stop (SIGTERM): systemd kills at 10 s
    took = time.monotonic() - t0
    assert took < 8, f"the model's stop took {took:.1f} s of systemd's 10"
    assert gone(pid, 5)                                    # our own server is stopped all the same
    kept = rig.saves[-1]
    assert kept["started_by_us"] is True and kept["how"] == "command", kept     # on the record for the next run
    said = [r.getMessage() for r in caplog.records if "next run" in r.getMessage()]
    assert said and "model.lifecycle.stop" in said[0] and "may still run" in said[0], said
    assert rig.kinds("model_stopped") == []                # not said stopped: it was not seen stopped
    marker = rig.tmp / "stopped.txt"
    done = _script(rig, "stop-ok", f"echo ran > '{marker}'")
    then = rig.make(persisted=kept, stop=done)
    then.adopt()                                           # the next run stops it, and says so
    assert marker.exists(), "the next run did not run the stop command"
    assert rig.kinds("model_stopped")[-1]["how"] == "command"
    assert rig.saves[-1]["started_by_us"] is False and then.snapshot()["started_by_us"] is False
    assert any("stop" in r.getMessage() and "previous run" in r.getMessage() for r in caplog.records)


def test_a_stop_while_the_start_asks_a_hung_observatory_to_stop_a_left_model_ends_at_once_and_keeps_it(rig,
                                                                                                        observatory,
                                                                                                        caplog):
    """A previous run had the Observatory start the model; the config no longer names it, so the start asks the
    Observatory to stop it, and the Observatory hangs. The service's stop meanwhile ends the wait at once, the words
    say the stop was cut short (not that the model is left running), and the record stays for the next run, which
    stops it."""
    import threading

    observatory.up = True
    kept = {"started_by_us": True, "how": "observatory", "observatory_url": observatory.url,
            "observatory_service": "small-model"}
    observatory.stop_hold = threading.Event()       # the Observatory takes the stop and does not answer
    lc = rig.make(persisted=dict(kept))
    starting = threading.Thread(target=lc.adopt, daemon=True)     # the lifecycle actor's on_start
    starting.start()
    assert wait_until(lambda: observatory.calls), "the Observatory was never asked"
    t0 = time.monotonic()
    lc.shutdown()                                   # the service's stop
    starting.join(10)
    took = time.monotonic() - t0
    assert not starting.is_alive() and took < 2, f"the stop waited {took:.1f} s on the Observatory"
    assert not rig.saves or rig.saves[-1]["started_by_us"] is True, rig.saves     # still on the record
    said = lc.snapshot()["last_error"]
    assert "small-model" in said and "the stop was cut short by the service's own stop" in said, said
    assert "the next start asks again" in said and "left running" not in said, said
    assert said in caplog.text
    observatory.stop_hold.set()
    then = rig.make(persisted=dict(kept))
    then.adopt()                                    # the next run asks again: stopped
    assert not observatory.up and rig.kinds("model_stopped")[-1]["how"] == "observatory"
    assert rig.saves[-1]["started_by_us"] is False


def test_a_hung_observatory_asked_to_stop_a_left_model_at_the_start_holds_it_seconds_and_says_it_hung(rig,
                                                                                                       observatory):
    """No stop is asked this time: the start asks the Observatory to stop the model a previous run had it start
    (the config no longer names it), and the Observatory takes the call and never answers. The start (and the
    sleep queued behind it, and /status's model card) waits seconds, not a minute, and says the Observatory hung."""
    import threading

    observatory.up = True
    observatory.stop_hold = threading.Event()       # the Observatory takes the stop and does not answer
    lc = rig.make(persisted={"started_by_us": True, "how": "observatory", "observatory_url": observatory.url,
                             "observatory_service": "small-model"})
    t0 = time.monotonic()
    lc.adopt()                                      # the lifecycle actor's on_start
    took = time.monotonic() - t0
    assert took < 8, f"the start waited {took:.1f} s on the hung Observatory"
    said = lc.snapshot()["last_error"]
    assert "small-model" in said and "left running" in said and "did not answer within" in said, said


@pytest.mark.parametrize("via", ["observatory", "stop command"])
def test_the_services_stop_during_an_idle_stop_that_hangs_ends_it_at_once_and_keeps_the_model_for_the_next_run(
        rig, observatory, via):
    """The cycle is over and the model's stop is asked (60 s allowed), and it hangs; the service's stop (SIGTERM)
    comes meanwhile: it does not wait out the minute, and the model stays on the record for the next run."""
    import threading

    if via == "observatory":
        lc = rig.make(url=observatory.url + "/v1", server="", model_path="", manage=True,
                      observatory_url=observatory.url, observatory_service="small-model")
        lc.ensure()
        observatory.stop_hold = threading.Event()   # the Observatory takes the stop and does not answer
        asked = lambda: [c for c in observatory.calls if c[0].endswith("/stop")]     # noqa: E731
    else:
        started = rig.tmp / "stop-started"
        lc = rig.make(stop=_script(rig, "stop-hung", f"touch '{started}'; sleep 120"))
        lc.ensure()
        asked = started.exists
    idle = threading.Thread(target=lc.tick, args=(False,), daemon=True)    # the cycle is over: stop the model
    idle.start()
    assert wait_until(asked), "the model's stop was never asked"
    t0 = time.monotonic()
    lc.shutdown()                                   # the service's stop (the runtime's, past the actor's 10 s)
    took = time.monotonic() - t0
    idle.join(10)
    assert not idle.is_alive() and took < 6, f"the service's stop waited {took:.1f} s on the idle stop"
    assert rig.saves[-1]["started_by_us"] is True, rig.saves[-1]        # the next run stops or adopts it
    assert rig.kinds("model_stopped") == []


def test_a_stop_while_the_model_loads_asks_a_hung_stop_command_once_within_its_seconds(rig, monkeypatch):
    """The service's stop comes while the model loads: the start gives up and stops it (the stop command hangs);
    the lifecycle actor's stop that follows does not ask it a second time, past systemd's 10 s."""
    import threading

    runs = rig.tmp / "stop-runs"
    lc = rig.make(stop=_script(rig, "stop-hung", f"echo run >> '{runs}'; sleep 120"))
    stopping = threading.Event()
    lc._service_stopping = stopping.is_set          # the service's stop flag, as the runtime hands it
    monkeypatch.setenv("FAKE_LLAMA_WARMUP", "60")   # the model takes a minute to load
    loading = threading.Thread(target=lambda: pytest.raises(Exception, lc.ensure), daemon=True)
    loading.start()
    assert wait_until(lambda: rig.saves and rig.saves[-1].get("pid")), "the model was never launched"
    t0 = time.monotonic()
    stopping.set()                                  # SIGTERM: the start gives up, stopping what it launched
    loading.join(10)
    lc.shutdown()                                   # then the lifecycle actor's on_stop
    took = time.monotonic() - t0
    assert took < 5.5, f"the model's stop took {took:.1f} s"
    assert runs.read_text().count("run") == 1, "the stop command was asked twice at the service's stop"
    assert rig.saves[-1]["started_by_us"] is True and rig.saves[-1]["unstopped"]


def test_a_stop_while_the_start_runs_the_stop_command_a_previous_run_left_keeps_the_record(rig, caplog):
    """The next run stops the model the last run's stop left (its stop command, which hangs again); the service's
    stop comes meanwhile: it ends at once, the record stays, and the log says the next run tries again."""
    import threading

    started = rig.tmp / "stop-started"
    hung = _script(rig, "stop-hung", f"touch '{started}'; sleep 120")
    kept = {"started_by_us": True, "how": "command", "pid": None, "unstopped": "its stop command did not end"}
    lc = rig.make(persisted=dict(kept), stop=hung)
    starting = threading.Thread(target=lc.adopt, daemon=True)     # the lifecycle actor's on_start
    starting.start()
    assert wait_until(started.exists), "the stop command never ran"
    t0 = time.monotonic()
    lc.shutdown()
    starting.join(10)
    took = time.monotonic() - t0
    assert not starting.is_alive() and took < 2, f"the stop waited {took:.1f} s on the stop command"
    assert all(s.get("started_by_us") for s in rig.saves), rig.saves     # nothing cleared it
    assert "the next run tries again" in caplog.text


def test_a_stop_while_the_start_stops_a_previous_runs_server_that_ignores_sigterm_ends_at_once(rig):
    """A dead run's server (its watchdog's pipe is not ours) is stopped at the start, SIGTERM then SIGKILL after
    stop_grace_seconds; it ignores SIGTERM (a llama-server still loading). The service's stop meanwhile does not wait
    the grace out: the server is killed at once."""
    import threading

    import psutil

    from tests.unit.test_lifecycle import healthy

    cmd = rig.make().built_command()
    deaf = _script(rig, "deaf", "trap '' TERM\nexec \"$@\"")       # SIGTERM ignored, through the exec
    p = rig.spawn([deaf, *cmd], env=dict(os.environ, FAKE_LLAMA_WARMUP="0"))
    assert wait_until(lambda: healthy(f"http://127.0.0.1:{rig.port}/health")), "the stand-in did not answer"
    record = {"pid": p.pid, "created": psutil.Process(p.pid).create_time(), "started_by_us": True, "cmd": cmd,
              "how": "command", "watchdog": 1}
    lc = rig.make(persisted=record, stop_grace_seconds=20.0)
    starting = threading.Thread(target=lc.adopt, daemon=True)     # the lifecycle actor's on_start
    starting.start()
    assert not wait_until(lambda: p.poll() is not None, timeout=0.5), "it did not ignore SIGTERM"
    t0 = time.monotonic()
    lc.shutdown()                                   # the service's stop
    starting.join(30)
    took = time.monotonic() - t0
    assert not starting.is_alive() and took < 3, f"the stop waited {took:.1f} s on the previous run's server"
    assert gone(p.pid, 5)
