"""A cull killed after any one of its durable writes (a state save, an event appended) is finished by the
next start with nothing lost and nothing said twice: one chain_closed, one brief_consumed, one chain_ended
(a chain that ended with a denial), the closing record gone.

Found by tests/reliability/test_kill9.py on 3.13 under load: a SIGKILL that landed after the state file
dropped the closing record but before chain_closed was appended lost the event for good (the restart saw
no closing record and no open chain, and asked for a brief). These kill the cull at every write in turn,
without timing.
"""
from __future__ import annotations

import json

import pytest

from hippocampus.cycle import executor
from hippocampus.store.events import FILE_NAME as EVENTS_FILE
from hippocampus.cycle.decide import Asked

from .test_cull_resume import CountingMemory, Killed

KILL_AFTER = range(1, 15)           # more than the durable writes of one cull (checked below)


class KillAfter:
    """Counts the context's durable writes and dies (Killed) right after the nth one has reached the disk."""

    def __init__(self, ctx, nth: int):
        self.nth, self.writes = nth, []
        state_save, append = ctx.state.save, ctx.events._append

        def save() -> None:
            state_save()
            self._wrote("state")

        def events_append(line: bytes, sync: bool) -> None:
            append(line, sync)
            self._wrote("event " + json.loads(line).get("type", "?"))
        ctx.state.save = save
        ctx.events._append = events_append

    def _wrote(self, what: str) -> None:
        self.writes.append(what)
        if len(self.writes) == self.nth:
            raise Killed(f"after durable write {self.nth}: {what} ({self.writes})")


def on_disk(cfg) -> list:
    """The events as the next start reads them (the file, not the dead process's memory)."""
    path = cfg.sleep.resolved_state_path().with_name(EVENTS_FILE)
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        if "type" in row:
            out.append(row)
    return out


def landed_chain(cfg, make_ctx, hand, deny: bool) -> tuple:
    ctx = make_ctx(cfg)
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    brief = hand.brief("the owl")
    draft_id = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    if deny:        # mechanical: nothing to redraft, so the chain ends with its denial
        d = hand.drafts("pending")[0]
        hand.review(draft_id, [{"op": op["index"], "verdict": "deny", "critique": "no"} for op in d["operations"]])
    else:
        hand.approve_all(draft_id)
    return brief, draft_id


@pytest.mark.parametrize("deny", [False, True], ids=["approved", "denied"])
@pytest.mark.parametrize("nth", KILL_AFTER)
def test_a_cull_killed_after_any_durable_write_is_finished_once(make_config, make_ctx, hand, nth, deny):
    cfg = make_config()
    brief, draft_id = landed_chain(cfg, make_ctx, hand, deny)

    dying = make_ctx(cfg)
    dying.memory = CountingMemory(cfg.memory.url)
    kill = KillAfter(dying, nth)
    try:
        executor.tend(dying)
        killed = False
    except Killed:
        killed = True
    if not killed:
        assert nth > len(kill.writes), "KILL_AFTER must reach past the cull's last durable write"

    restarted = make_ctx(cfg)                                   # a new process reads the state file
    restarted.memory = CountingMemory(cfg.memory.url)
    executor.tend(restarted)
    again = make_ctx(cfg)
    again.memory = CountingMemory(cfg.memory.url)
    executor.tend(again)                                        # and the one after it has nothing left to do

    where = f"killed after write {nth} of {kill.writes}"
    events = on_disk(cfg)
    closed = [e for e in events if e["type"] == "chain_closed"]
    assert [e["cluster_id"] for e in closed] == [draft_id], where
    consumed = [e for e in events if e["type"] == "brief_consumed"]
    assert [e["brief_id"] for e in consumed] == [brief], where
    ended = [e for e in events if e["type"] == "chain_ended"]
    assert [e["cluster_id"] for e in ended] == ([draft_id] if deny else []), where
    closes = [c for c in dying.memory.calls + restarted.memory.calls if c.endswith(f"/drafts/{draft_id}/close")]
    assert len(closes) == 1, f"{where}: the draft closed {len(closes)} times"          # a close is recorded
    assert again.state.get("closing") == {}, where
    assert not any("/consume" in c or "/close" in c for c in again.memory.calls), where
    assert hand.open_briefs() == [] and hand.drafts("pending") == [] and hand.drafts("reviewed") == [], where
    assert [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"] == [], where


def run_tick(ctx) -> tuple:
    """The scheduler's tick without its actors: one snapshot, one decision, the chain's steps, the check's."""
    tended, checked, _ = executor.tick(ctx, Asked(redraft=True))
    return tended.to_dict(), checked.to_dict()


def test_the_tick_that_finishes_a_cut_short_cull_does_not_sleep_on_that_chains_brief(make_config, make_ctx, hand):
    """Killed with the drafts closed and the brief not yet consumed: Memory shows no live chain and the brief
    open. The tick after the restart finishes the cull (consuming the brief); its check, decided from the same
    snapshot, must not sleep on that brief again (new fragments would be drafted under an answered brief: a
    second attempt 1 for it)."""
    cfg = make_config()
    brief, draft_id = landed_chain(cfg, make_ctx, hand, deny=False)
    dying = make_ctx(cfg)
    dying.memory = CountingMemory(cfg.memory.url, die_on="/consume")
    with pytest.raises(Killed):
        executor.tend(dying)
    assert hand.drafts("reviewed") == [] and [b["id"] for b in hand.open_briefs()] == [brief]
    for i in range(3):                                          # the main model wrote more since
        hand.short(f"the fox crossed the field at dawn, day {i}", topic="fox")

    restarted = make_ctx(cfg)
    tend_report, check = run_tick(restarted)
    assert tend_report["closed"] == [draft_id]
    assert check["status"] != "sleeping" and check["brief_id"] != brief, check
    firsts = [d for d in hand.drafts() if int(d.get("attempt") or 1) == 1 and d.get("brief_id_used") == brief]
    assert [d["id"] for d in firsts] == [draft_id], firsts


@pytest.mark.parametrize("nth", KILL_AFTER)
def test_an_older_brief_the_cull_retires_is_said_consumed_once_whatever_write_it_is_killed_after(
        make_config, make_ctx, hand, nth):
    """A chain that lands consumes the briefs written before its own ('superseded'): one brief_consumed each."""
    cfg = make_config()
    older = hand.brief("the owl, first ask")
    brief, draft_id = landed_chain(cfg, make_ctx, hand, deny=False)
    assert older != brief
    dying = make_ctx(cfg)
    kill = KillAfter(dying, nth)
    try:
        executor.tend(dying)
    except Killed:
        pass
    for _ in range(2):                                          # the restart, and the tick after it
        executor.tend(make_ctx(cfg))
    where = f"killed after write {nth} of {kill.writes}"
    consumed = sorted(e["brief_id"] for e in on_disk(cfg) if e["type"] == "brief_consumed")
    assert consumed == sorted([brief, older]), where
    assert hand.open_briefs() == [], where


class DiesAnswered(CountingMemory):
    """Dies the moment Memory has answered the nth consume (kill -9 between Memory's change and the event)."""

    def __init__(self, *a, nth: int, **kw):
        super().__init__(*a, **kw)
        self.nth = nth

    def request(self, method, path, **kw):
        out = super().request(method, path, **kw)
        if path.endswith("/consume"):
            self.nth -= 1
            if self.nth == 0:
                raise Killed(f"{method} {path} answered")
        return out


@pytest.mark.parametrize("nth", [1, 2])
def test_a_cull_killed_just_after_memory_consumed_a_brief_still_says_it_once(make_config, make_ctx, hand, nth):
    cfg = make_config()
    older = hand.brief("the owl, first ask")
    brief, draft_id = landed_chain(cfg, make_ctx, hand, deny=False)
    dying = make_ctx(cfg)
    dying.memory = DiesAnswered(cfg.memory.url, nth=nth)
    with pytest.raises(Killed):
        executor.tend(dying)
    for _ in range(2):
        executor.tend(make_ctx(cfg))
    consumed = sorted(e["brief_id"] for e in on_disk(cfg) if e["type"] == "brief_consumed")
    assert consumed == sorted([brief, older])
    assert hand.open_briefs() == []
