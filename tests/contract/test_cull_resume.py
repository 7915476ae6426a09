"""A cull cut short by a crash is finished after the restart, never repeated (issue 5)."""
from __future__ import annotations

import pytest

from hippocampus.cycle import executor
from hippocampus.memory import MemoryClient


class Killed(BaseException):
    """Stands for the process dying: not an Exception, so nothing on the way catches it."""


class CountingMemory(MemoryClient):
    def __init__(self, *a, die_on: str = "", skip: int = 0, **kw):
        super().__init__(*a, **kw)
        self.calls: list = []
        self.die_on, self.skip = die_on, skip      # skip: the first `skip` matching calls go through

    def request(self, method, path, **kw):
        key = f"{method} {path}"
        if self.die_on and self.die_on in key:
            self.skip -= 1
            if self.skip < 0:
                raise Killed(key)
        self.calls.append(key)
        return super().request(method, path, **kw)


def _killed_between_close_and_consume(make_config, make_ctx, hand) -> tuple:
    """A chain slept on and approved whole, then a tend killed after its draft's close and before the brief's
    consume: (cfg, brief, draft_id)."""
    cfg = make_config()
    ctx = make_ctx(cfg)
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    brief = hand.brief("the owl")
    draft_id = executor.check(ctx).to_dict()["sleep"]["draft_id"]
    hand.approve_all(draft_id)
    dying = make_ctx(cfg)
    dying.memory = CountingMemory(cfg.memory.url, die_on="/consume")
    with pytest.raises(Killed):
        executor.tend(dying)
    assert any(c.endswith(f"/drafts/{draft_id}/close") for c in dying.memory.calls)
    return cfg, brief, draft_id


def test_killed_between_close_and_consume_finishes_without_a_second_close_or_consume(make_config, make_ctx, hand):
    cfg, brief, draft_id = _killed_between_close_and_consume(make_config, make_ctx, hand)
    assert [b["id"] for b in hand.open_briefs()] == [brief]          # not consumed yet

    restarted = make_ctx(cfg)                                          # a new process reads the state file
    restarted.memory = CountingMemory(cfg.memory.url)
    report = executor.tend(restarted).to_dict()
    assert report["closed"] == [draft_id]
    calls = restarted.memory.calls
    assert not any(c.endswith("/close") for c in calls)               # no duplicate close
    assert sum(c.endswith(f"/brief/{brief}/consume") for c in calls) == 1
    assert hand.open_briefs() == []
    assert [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"] == []
    assert [e for e in restarted.events.list() if e["type"] == "chain_closed"]
    again = make_ctx(cfg)
    again.memory = CountingMemory(cfg.memory.url)
    executor.tend(again)
    assert not any("/consume" in c or "/close" in c for c in again.memory.calls)


def test_killed_after_the_draft_post_finishes_the_submit_instead_of_drafting_again(make_config, make_ctx, hand):
    cfg = make_config()
    for i in range(3):
        hand.short(f"the owl called at midnight, night {i}", topic="owl")
    hand.brief("the owl")
    dying = make_ctx(cfg)
    # dies right after POST /drafts (the first POST /near is this copy's claim on the brief, claims.py)
    dying.memory = CountingMemory(cfg.memory.url, die_on="POST /near", skip=1)
    with pytest.raises(Killed):
        executor.check(dying)
    assert len(hand.drafts()) == 1
    restarted = make_ctx(cfg)
    executor.check(restarted)
    assert len(hand.drafts()) == 1                                     # never a second draft for the brief
    notes = [n for n in hand.near() if n["metadata"].get("topic") == "hippocampus, review"]
    assert len(notes) == 1 and hand.drafts()[0]["id"] in notes[0]["content"]
    assert [e["type"] for e in restarted.events.list()].count("draft_submitted") == 1


def test_hand_edited_cull_records_are_dropped_and_named_and_the_sound_one_closes(make_config, make_ctx, hand):
    """Cull records edited by hand (one missing its keys, one whose brief_id is a list, one whose brief_id is a
    mapping) made every tend fail (KeyError 'drafts') and every check too (unhashable type: 'list'). Each is
    dropped and named (the chain and what was wrong), the file as it was kept beside it; the sound record closes."""
    import json

    cfg, brief, draft_id = _killed_between_close_and_consume(make_config, make_ctx, hand)
    path = cfg.sleep.resolved_state_path()
    data = json.loads(path.read_text(encoding="utf-8"))
    sound = data["closing"][draft_id]
    data["closing"].update({"c-bare": {"cluster_id": "c-bare"},
                            "c-list": {**sound, "cluster_id": "c-list", "brief_id": ["b1", "b2"]},
                            "c-map": {**sound, "cluster_id": "c-map", "brief_id": {"id": "b1"}}})
    path.write_text(json.dumps(data), encoding="utf-8")

    restarted = make_ctx(cfg)
    checked = executor.check(restarted).to_dict()
    assert checked["status"] != "error" and not checked["error"], checked
    report = executor.tend(restarted).to_dict()
    assert not report["error"] and report["closed"] == [draft_id], report
    assert hand.open_briefs() == [] and restarted.state.get("closing") == {}
    said = restarted.state.view()["write_error"] or ""
    assert "'closing' holds a cull record for chain 'c-bare' whose drafts is missing" in said, said
    assert "for chain 'c-list' whose brief_id is a list where an id or null belongs" in said, said
    assert "for chain 'c-map' whose brief_id is a mapping where an id or null belongs" in said, said
    assert brief not in said and "dropped" in said
    kept = list(path.parent.glob("state.json.corrupt-*"))
    assert len(kept) == 1 and json.loads(kept[0].read_text(encoding="utf-8")) == data
