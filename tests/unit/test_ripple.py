"""The ripple, with real child processes and a real local HTTP receiver."""
from __future__ import annotations

import getpass
import json
import os
import sys
import time
from pathlib import Path

import pytest

from hippocampus.config import RippleConfig
from hippocampus.ripple.fire import MAX_MESSAGE, NUDGE, RESTATE, WOKEN, Ripple, message_for
from tests.harness.receiver import Receiver

# ---------------------------------------------------------------- helpers

RECORDER = r'''
import json, os, sys
out = {OUT!r}
data = {{
    "argv": sys.argv[1:],
    "env": {{k: v for k, v in os.environ.items() if k.startswith("SEREN_RIPPLE_")}},
    "stdin": sys.stdin.read(),
    "cwd": os.getcwd(),
}}
tmp = out + ".part"
with open(tmp, "w", encoding="utf-8") as f:
    json.dump(data, f)
os.replace(tmp, out)
'''

SLEEPER = r'''
import os, sys, time
def put(path, text):
    with open(path + ".part", "w") as f:
        f.write(text)
    os.replace(path + ".part", path)   # whole or absent, never half-written
put({PID!r}, str(os.getpid()))
time.sleep({SECONDS!r})
put({DONE!r}, "done")
'''


def wait_for(pred, timeout: float = 10.0, poll: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(poll)
    return pred()


def recorder_script(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "record.json"
    script = tmp_path / "record.py"
    script.write_text(RECORDER.format(OUT=str(out)), encoding="utf-8")
    return script, out


def sleeper_script(tmp_path: Path, seconds: float, name: str = "sleeper") -> tuple[Path, Path, Path]:
    pid, done = tmp_path / f"{name}.pid", tmp_path / f"{name}.done"
    script = tmp_path / f"{name}.py"
    script.write_text(SLEEPER.format(PID=str(pid), SECONDS=seconds, DONE=str(done)), encoding="utf-8")
    return script, pid, done


def read_record(out: Path) -> dict:
    assert wait_for(out.exists), "the script never wrote its record"
    return json.loads(out.read_text(encoding="utf-8"))


def script_cfg(command: list, **kw) -> RippleConfig:
    # run_as the account running the tests: it runs directly even when that is root,
    # where an empty run_as is (rightly) refused.
    kw.setdefault("run_as", getpass.getuser())
    return RippleConfig(type="script", command=command, **kw)


@pytest.fixture
def ripples():
    made: list[Ripple] = []
    yield made
    for r in made:
        r.shutdown(timeout=5)


def make(ripples: list, cfg: RippleConfig, log_dir: Path, **kw) -> Ripple:
    r = Ripple(cfg, log_dir=log_dir, **kw)
    ripples.append(r)
    return r


# ---------------------------------------------------------------- messages

BUILT_IN = ["brief_requested", "draft_submitted", "tend_resubmitted", "brief_unmatched"]


@pytest.mark.parametrize("kind", BUILT_IN)
def test_built_in_messages_open_woken_and_close_with_nudge(kind):
    msg = message_for({"type": kind, "at": 1.0, "draft_id": "d-1"}, RippleConfig())
    assert msg.startswith(WOKEN)
    assert msg.endswith(NUDGE)
    assert "{" not in msg and "}" not in msg
    assert (RESTATE in msg) == (kind in ("draft_submitted", "tend_resubmitted"))
    if kind in ("draft_submitted", "tend_resubmitted"):
        assert "d-1" in msg
        assert msg.index(RESTATE) < msg.index(NUDGE)
        assert '"restate": false' in msg


def test_terminal_message_is_its_own_and_says_last_attempt():
    cfg = RippleConfig()
    normal = message_for({"type": "tend_resubmitted", "draft_id": "d-9", "terminal": False}, cfg)
    last = message_for({"type": "tend_resubmitted", "draft_id": "d-9", "terminal": True}, cfg)
    assert normal != last
    assert "LAST attempt" in last and "LAST attempt" not in normal
    for word in ("edited_content", "edited_kind", "edited_target_core_id", "short-term", "d-9"):
        assert word in last
    assert last.startswith(WOKEN) and last.endswith(NUDGE) and RESTATE in last


def test_a_first_draft_that_is_the_last_attempt_is_woken_to_as_the_last(make_config, make_ctx, hand):
    """sleep.max_attempts: 1 sends the first draft terminal: nothing is redrafted after it. Found: its wake-up
    asked for 'a specific critique for each one you deny, so the redraft knows what to fix', so the reviewer
    denied what a fix would have landed, and no redraft ever came."""
    from hippocampus.cycle import executor

    ctx = make_ctx(make_config(sleep={"max_attempts": 1}))
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon, day {i}", topic="tea")
    hand.brief("tea mattered this week")
    draft_id = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    assert hand.draft(draft_id)["terminal"] is True
    event = next(e for e in ctx.events.list(limit=50) if e["type"] == "draft_submitted")
    said = message_for(event, RippleConfig())
    assert "LAST attempt" in said and "edited_content" in said and draft_id in said, said
    assert "so the redraft knows what to fix" not in said
    assert "LAST attempt" not in message_for({"type": "draft_submitted", "draft_id": "d-1"}, RippleConfig())


def test_unknown_kind_gets_woken_only():
    msg = message_for({"type": "chain_closed", "draft_id": "x"}, RippleConfig())
    assert msg.startswith(WOKEN)
    assert msg.endswith("The hippocampus says: chain_closed.")
    assert NUDGE not in msg


def test_operator_messages_are_used_exactly_with_placeholders_filled():
    cfg = RippleConfig(messages={
        "draft_submitted": 'Review {draft_id} for {event}; json {"a": 1} {message}{other}',
        "tend_resubmitted": "again {draft_id}",
    })
    msg = message_for({"type": "draft_submitted", "draft_id": "d-2"}, cfg)
    assert msg == 'Review d-2 for draft_submitted; json {"a": 1} {other}'
    # terminal falls back to the operator's tend_resubmitted, not the built-in
    assert message_for({"type": "tend_resubmitted", "draft_id": "d-3", "terminal": True}, cfg) == "again d-3"
    cfg.messages["tend_resubmitted_terminal"] = "last one: {draft_id}"
    assert message_for({"type": "tend_resubmitted", "draft_id": "d-3", "terminal": True}, cfg) == "last one: d-3"
    assert message_for({"type": "tend_resubmitted", "draft_id": "d-3"}, cfg) == "again d-3"


def test_a_filled_value_is_never_filled_again():
    cfg = RippleConfig(messages={"draft_submitted": "draft {draft_id} / {event}"})
    msg = message_for({"type": "draft_submitted", "draft_id": "{event}"}, cfg)
    assert msg == "draft {event} / draft_submitted"


def test_wants():
    assert not Ripple(RippleConfig(), log_dir=Path(".")).wants("draft_submitted")
    r = Ripple(RippleConfig(type="script"), log_dir=Path("."))
    assert r.wants("draft_submitted") and r.wants("brief_requested")
    assert not r.wants("sleep_done")
    assert Ripple(RippleConfig(type="endpoint", events=["sleep_done"]), log_dir=Path(".")).wants("sleep_done")


def test_fire_when_off_answers_and_never_raises(tmp_path):
    out = Ripple(RippleConfig(), log_dir=tmp_path).fire({"type": "draft_submitted"})
    assert out["ok"] is False and "error" in out


# ---------------------------------------------------------------- script

def test_script_gets_placeholders_env_and_hostile_text_literally(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    hostile = 'look $(touch pwned); rm -rf x `touch pwned2` "q" \'s\' && touch pwned3 | {not_ours} {draft_id}'
    cfg = script_cfg([sys.executable, str(script), "{message}", "{event}", "{draft_id}", "id={draft_id}!"],
                     cwd=str(work), messages={"draft_submitted": hostile})
    r = make(ripples, cfg, tmp_path / "state")
    event = {"type": "draft_submitted", "at": 123.5, "draft_id": "d-{message}", "operations": 3}
    res = r.fire(event)
    assert res["ok"] is True and res["type"] == "script"
    assert res["event"] == "draft_submitted" and isinstance(res["pid"], int)
    rec = read_record(out)
    expected_msg = hostile.replace("{draft_id}", "d-{message}")
    assert rec["argv"] == [expected_msg, "draft_submitted", "d-{message}", "id=d-{message}!"]
    assert rec["env"]["SEREN_RIPPLE_EVENT"] == "draft_submitted"
    assert rec["env"]["SEREN_RIPPLE_MESSAGE"] == expected_msg
    assert json.loads(rec["env"]["SEREN_RIPPLE_JSON"]) == event
    assert rec["stdin"] == ""
    assert os.path.realpath(rec["cwd"]) == os.path.realpath(work)
    assert r.settle(10)
    for name in ("pwned", "pwned2", "pwned3"):
        for where in (work, tmp_path, Path.cwd()):
            assert not (where / name).exists()
    assert (tmp_path / "state" / "ripple.log").exists()


def test_a_ripple_log_past_its_size_is_moved_aside_before_the_next_wake_up(tmp_path, ripples):
    """Found: ripple.log grew for good (every wake-up appends the main model's whole session). Past the limit it
    becomes ripple.log.1 (the one before dropped) and the next wake-up writes a fresh one."""
    from hippocampus.store import private

    state = tmp_path / "state"
    state.mkdir()
    (state / "ripple.log").write_bytes(b"an old session\n" * (private.LOG_BYTES // 15 + 1))
    script, _ = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"]), state)
    assert r.fire({"type": "draft_submitted", "draft_id": "d1"})["ok"] is True and r.settle(10)
    assert (state / "ripple.log.1").read_bytes().startswith(b"an old session")
    assert (state / "ripple.log").stat().st_size < 100_000

def test_script_built_in_message_arrives_whole(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"]), tmp_path)
    assert r.fire({"type": "draft_submitted", "draft_id": "d-7"})["ok"]
    rec = read_record(out)
    assert rec["argv"] == [message_for({"type": "draft_submitted", "draft_id": "d-7"}, r.cfg)]
    assert rec["argv"][0].startswith(WOKEN) and rec["argv"][0].endswith(NUDGE)


def test_stdin_mode_sends_the_message_on_stdin(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    cfg = script_cfg([sys.executable, str(script), "{message}", "{event}"], stdin=True,
                     messages={"brief_requested": "bedtime; $(touch pwned) {event}"})
    r = make(ripples, cfg, tmp_path)
    assert r.fire({"type": "brief_requested", "at": 1})["ok"]
    rec = read_record(out)
    assert rec["argv"] == ["", "brief_requested"]
    assert rec["stdin"] == "bedtime; $(touch pwned) brief_requested"
    assert rec["env"]["SEREN_RIPPLE_MESSAGE"] == rec["stdin"]
    assert r.settle(10)
    assert not (tmp_path / "pwned").exists()


def test_terminal_wording_reaches_the_script(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"]), tmp_path)
    assert r.fire({"type": "tend_resubmitted", "draft_id": "d-4", "terminal": True})["ok"]
    got = read_record(out)["argv"][0]
    assert "LAST attempt" in got
    assert got != message_for({"type": "tend_resubmitted", "draft_id": "d-4"}, r.cfg)
    assert got == message_for({"type": "tend_resubmitted", "draft_id": "d-4", "terminal": True}, r.cfg)


def test_operator_override_reaches_the_script_exactly(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    text = 'Please review {draft_id} - {"verbatim": true}'
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"],
                                 messages={"draft_submitted": text}), tmp_path)
    assert r.fire({"type": "draft_submitted", "draft_id": "d-5"})["ok"]
    assert read_record(out)["argv"] == ['Please review d-5 - {"verbatim": true}']


def test_long_message_is_cut(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"],
                                 messages={"draft_submitted": "x" * (MAX_MESSAGE + 500)}), tmp_path)
    assert r.fire({"type": "draft_submitted"})["ok"]
    assert read_record(out)["argv"] == ["x" * MAX_MESSAGE]


def test_one_at_a_time_per_event_type(tmp_path, ripples):
    script, pid, done = sleeper_script(tmp_path, 1.0)
    r = make(ripples, script_cfg([sys.executable, str(script)]), tmp_path)
    first = r.fire({"type": "draft_submitted", "draft_id": "a"})
    assert first["ok"] is True
    assert r.busy("draft_submitted") and not r.busy("brief_requested")
    second = r.fire({"type": "draft_submitted", "draft_id": "b"})
    assert second == {"type": "script", "ok": False, "skipped": "the last ripple for this event is still running"}
    assert r.running_count() == 1
    assert r.settle(10)
    assert done.exists() and not r.busy("draft_submitted")
    done.unlink()
    third = r.fire({"type": "draft_submitted", "draft_id": "c"})
    assert third["ok"] is True and third["pid"] != first["pid"]
    assert r.settle(10) and done.exists()


def test_other_event_types_are_not_held_back(tmp_path, ripples):
    script, _pid, _done = sleeper_script(tmp_path, 1.0)
    r = make(ripples, script_cfg([sys.executable, str(script)]), tmp_path)
    assert r.fire({"type": "draft_submitted"})["ok"]
    assert r.fire({"type": "brief_requested"})["ok"]
    assert r.running_count() == 2
    assert r.settle(10) and r.running_count() == 0


def test_settle_times_out_without_killing(tmp_path, ripples):
    script, pid, done = sleeper_script(tmp_path, 1.0)
    r = make(ripples, script_cfg([sys.executable, str(script)]), tmp_path)
    assert r.fire({"type": "draft_submitted"})["ok"]
    t0 = time.monotonic()
    assert r.settle(0.2) is False
    assert time.monotonic() - t0 < 1.0
    assert r.running_count() == 1 and not done.exists()
    # the child was left alone and finishes on its own
    assert wait_for(done.exists, 10)
    assert r.settle(5) is True


def test_settle_with_nothing_running_is_immediate(tmp_path):
    assert Ripple(script_cfg(["true"]), log_dir=tmp_path).settle(0) is True


def test_timeout_kills_a_script_that_never_exits(tmp_path, ripples):
    script, pid, done = sleeper_script(tmp_path, 600)
    r = make(ripples, script_cfg([sys.executable, str(script)], timeout_seconds=0.5), tmp_path)
    t0 = time.monotonic()
    res = r.fire({"type": "brief_requested"})
    assert res["ok"] is True
    assert wait_for(pid.exists, 10)
    assert r.settle(10) is True
    assert time.monotonic() - t0 < 8
    assert not done.exists() and not r.busy("brief_requested")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)
    assert res == {"type": "script", "ok": True, "pid": res["pid"], "event": "brief_requested",
                   "run_as": res["run_as"]}


# The handler only passes the signal on: a child.wait() inside it (the main thread already waits on the child, holding
# Popen's waitpid lock) hung the parent until the ripple's SIGKILL, TERM_GRACE (5 s) later. Its pid is written once the
# handler is in place, so a SIGTERM right after never meets Python's default (die, leaving the command running).
WATCHING_PARENT = r'''
import os, signal, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
def forward(sig, frame):        # as runuser and sudo do: a SIGTERM is passed on to the command; a SIGKILL cannot be
    child.terminate()
signal.signal(signal.SIGTERM, forward)
with open({PID!r} + ".part", "w") as f:
    f.write(str(child.pid))
os.replace({PID!r} + ".part", {PID!r})
child.wait()
sys.exit(143)                   # the command ended (by the SIGTERM passed on): so does its parent, as runuser does
'''


@pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("how", ["timeout", "shutdown"])
def test_a_wake_up_run_through_runuser_or_sudo_is_ended_whole(tmp_path, ripples, how):
    """Found: a wake-up that hung past ripple.timeout_seconds (or was running at the service's stop) was ended with
    SIGKILL, which runuser and sudo (run_as another account) cannot pass on: the woken model went on running,
    the ripple said it was killed, and the next wake-up could land on top of it."""
    pid = tmp_path / "grandchild.pid"
    script = tmp_path / "watching_parent.py"
    script.write_text(WATCHING_PARENT.format(PID=str(pid)), encoding="utf-8")
    r = make(ripples, script_cfg([sys.executable, str(script)], timeout_seconds=1.0 if how == "timeout" else 600),
             tmp_path)
    assert r.fire({"type": "draft_submitted"})["ok"]
    assert wait_for(pid.exists, 10)
    grandchild = int(pid.read_text())
    try:
        if how == "timeout":
            assert r.wait("draft_submitted", 20)["killed"] is True
        else:
            r.shutdown(timeout=5)

        def gone() -> bool:
            try:
                os.kill(grandchild, 0)
            except ProcessLookupError:
                return True
            return False
        assert wait_for(gone, 10), "the woken command was left running"
    finally:
        with __import__("contextlib").suppress(OSError):
            os.kill(grandchild, 9)


def test_shutdown_kills_children(tmp_path):
    script, pid, done = sleeper_script(tmp_path, 600)
    r = Ripple(script_cfg([sys.executable, str(script)]), log_dir=tmp_path)
    assert r.fire({"type": "brief_requested"})["ok"]
    assert wait_for(pid.exists, 10)
    r.shutdown(timeout=5)
    assert r.running_count() == 0
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)


def test_missing_program_is_an_answer(tmp_path, ripples):
    r = make(ripples, script_cfg(["seren-no-such-program-here", "{message}"]), tmp_path)
    res = r.fire({"type": "draft_submitted"})
    assert res["ok"] is False and res["type"] == "script"
    assert res["error"].startswith("the ripple command 'seren-no-such-program-here' could not be started: ")
    assert "Error" not in res["error"]                            # its reason, never an exception's class name
    assert r.running_count() == 0


def test_empty_command_is_an_answer(tmp_path):
    res = Ripple(script_cfg([]), log_dir=tmp_path).fire({"type": "draft_submitted"})
    assert res["ok"] is False and "empty" in res["error"]


def test_privileged_service_with_empty_run_as_refuses(tmp_path, ripples):
    script, out = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{message}"], run_as=""), tmp_path,
             whoami=lambda: ("root", True))
    res = r.fire({"type": "draft_submitted", "draft_id": "d"})
    assert res["type"] == "script" and res["ok"] is False and res["refused"] is True
    assert "runs as root" in res["error"] and "run_as is empty" in res["error"]
    assert r.running_count() == 0 and not r.busy("draft_submitted")
    assert not out.exists() and not (tmp_path / "ripple.log").exists()


def test_run_as_the_current_user_runs(tmp_path, ripples):
    me = getpass.getuser()
    script, out = recorder_script(tmp_path)
    r = make(ripples, script_cfg([sys.executable, str(script), "{event}"], run_as=me), tmp_path)
    res = r.fire({"type": "brief_requested"})
    assert res["ok"] is True and res["run_as"] == me
    assert read_record(out)["argv"] == ["brief_requested"]
    assert r.settle(10)


# ---------------------------------------------------------------- endpoint

@pytest.fixture
def receiver():
    r = Receiver("/api/v1/system/ripple")
    yield r
    r.close()


def test_endpoint_posts_the_message_with_the_bearer(tmp_path, receiver):
    cfg = RippleConfig(type="endpoint", url=receiver.url, bearer_token="s3cret")
    r = Ripple(cfg, log_dir=tmp_path)
    event = {"type": "draft_submitted", "at": 99.0, "draft_id": "d-8", "operations": 2, "kinds": ["attach"]}
    res = r.fire(event)
    assert res == {"type": "endpoint", "ok": True, "status": 200}
    assert len(receiver.requests) == 1
    got = receiver.requests[0]
    assert got["path"] == "/api/v1/system/ripple"
    assert got["headers"]["Authorization"] == "Bearer s3cret"
    assert got["headers"]["Content-Type"] == "application/json"
    body = got["body"]
    assert body["service"] == "seren-hippocampus"
    assert body["event"] == "draft_submitted"
    assert body["message"] == message_for(event, cfg)
    assert body["draft_id"] == "d-8"
    assert body["operations"] == 2 and body["kinds"] == ["attach"] and body["at"] == 99.0
    assert "command" not in body and "type" not in body
    assert r.running_count() == 0 and r.settle(0)


def test_endpoint_without_a_bearer_sends_none(tmp_path, receiver):
    r = Ripple(RippleConfig(type="endpoint", url=receiver.url), log_dir=tmp_path)
    assert r.fire({"type": "brief_requested", "at": 1})["ok"] is True
    assert "Authorization" not in receiver.requests[0]["headers"]
    assert receiver.requests[0]["body"]["draft_id"] is None


def test_endpoint_409_keeps_its_reason(tmp_path, receiver):
    receiver.status = 409
    receiver.answer = json.dumps({"ok": False, "error": "alice is not logged on to this box"}).encode()
    res = Ripple(RippleConfig(type="endpoint", url=receiver.url), log_dir=tmp_path).fire(
        {"type": "brief_requested"})
    assert res == {"type": "endpoint", "ok": False, "status": 409,
                   "error": f"the ripple endpoint at {receiver.url} answered an error (HTTP 409): "
                            "'alice is not logged on to this box'"}


def test_endpoint_detail_and_text_errors_are_cut(tmp_path, receiver):
    r = Ripple(RippleConfig(type="endpoint", url=receiver.url), log_dir=tmp_path)
    receiver.status = 401
    receiver.answer = b'{"detail": "no bearer"}'
    assert r.fire({"type": "brief_requested"})["error"].endswith("answered an error (HTTP 401): 'no bearer'")
    receiver.status = 500
    receiver.content_type = "text/plain"
    receiver.answer = b"E" * 1000
    res = r.fire({"type": "brief_requested"})
    assert res["status"] == 500 and res["error"].count("E") == 200      # what it said, cut


def test_endpoint_empty_url(tmp_path):
    res = Ripple(RippleConfig(type="endpoint", url="  "), log_dir=tmp_path).fire({"type": "brief_requested"})
    assert res == {"type": "endpoint", "ok": False, "error": "ripple.url is empty"}


def test_endpoint_nobody_listening_is_an_answer(tmp_path, receiver):
    url = receiver.url
    receiver.close()
    res = Ripple(RippleConfig(type="endpoint", url=url, timeout_seconds=2), log_dir=tmp_path).fire(
        {"type": "brief_requested"})
    assert res["ok"] is False and res["type"] == "endpoint"
    assert res["error"] == f"the ripple endpoint at {url} refused the connection: nothing is listening there"


def test_endpoint_timeout_is_the_smaller_of_30s_and_the_config(tmp_path, receiver):
    receiver.delay = 10
    r = Ripple(RippleConfig(type="endpoint", url=receiver.url, timeout_seconds=0.5), log_dir=tmp_path)
    t0 = time.monotonic()
    res = r.fire({"type": "brief_requested"})
    assert time.monotonic() - t0 < 2
    assert res["ok"] is False and "did not answer within 0.5 s (ripple.timeout_seconds)" in res["error"]
