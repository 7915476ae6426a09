"""Two open briefs (the main model wrote two): a sleep on the newer one that drafts nothing answers the older one
too, as a chain that lands does (tend._retire_older_briefs), so the next check does not sleep again on the older
one. One brief_consumed each (the older with superseded_by), said once even across a crash."""
from __future__ import annotations

import pytest

from hippocampus.cycle import executor

from .test_cull_kill_points import DiesAnswered, KillAfter, on_disk
from .test_cull_resume import Killed


def two_briefs(hand) -> tuple:
    older = hand.brief("the owl, first ask")
    newer = hand.brief("the owl, asked again")
    assert older != newer
    return older, newer


def consumed(cfg) -> list:
    return sorted((e["brief_id"], e.get("superseded_by")) for e in on_disk(cfg) if e["type"] == "brief_consumed")


def test_a_quiet_sleep_on_the_newer_brief_answers_the_older_one_and_the_next_check_does_not_sleep_again(
        make_config, make_ctx, hand):
    cfg = make_config()
    older, newer = two_briefs(hand)
    ctx = make_ctx(cfg)
    first = executor.check(ctx).to_dict()
    assert first["status"] == "sleeping" and first["brief_id"] == newer and first["sleep"]["quiet"], first
    assert hand.open_briefs() == []
    assert consumed(cfg) == sorted([(newer, None), (older, newer)])
    second = executor.check(make_ctx(cfg)).to_dict()
    assert second["status"] != "sleeping" and second.get("brief_id") != older, second


@pytest.mark.parametrize("nth", range(1, 10))
def test_a_quiet_sleep_killed_after_any_durable_write_never_sleeps_on_the_older_brief(make_config, make_ctx, hand, nth):
    cfg = make_config()
    older, newer = two_briefs(hand)
    dying = make_ctx(cfg)
    kill = KillAfter(dying, nth)
    try:
        executor.check(dying)
    except Killed:
        pass
    checks = [executor.check(make_ctx(cfg)).to_dict() for _ in range(2)]     # the restart, and the check after
    where = f"killed after write {nth} of {kill.writes}: {checks}"
    assert not any(c["status"] == "sleeping" and c.get("brief_id") == older for c in checks), where
    assert consumed(cfg) == sorted([(newer, None), (older, newer)]), where
    assert hand.open_briefs() == [], where


@pytest.mark.parametrize("nth", [1, 2])
def test_a_quiet_sleep_killed_just_after_memory_consumed_a_brief_still_says_it_once(make_config, make_ctx, hand, nth):
    cfg = make_config()
    older, newer = two_briefs(hand)
    dying = make_ctx(cfg)
    dying.memory = DiesAnswered(cfg.memory.url, nth=nth)
    with pytest.raises(Killed):
        executor.check(dying)
    checks = [executor.check(make_ctx(cfg)).to_dict() for _ in range(2)]
    assert not any(c["status"] == "sleeping" and c.get("brief_id") == older for c in checks), checks
    assert consumed(cfg) == sorted([(newer, None), (older, newer)])
    assert hand.open_briefs() == []


def test_a_hand_edited_record_of_the_briefs_to_retire_is_read_as_none_and_named(make_config, make_ctx, hand):
    """The state's retiring_briefs edited by hand so that its ids are no list (or missing) failed every sleep on
    that brief (TypeError / KeyError 'ids'): its brief stayed open and was slept on again at every check. It is
    read as none and named; the sleep answers both briefs."""
    import json

    cfg = make_config()
    older, newer = two_briefs(hand)
    path = cfg.sleep.resolved_state_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps({"retiring_briefs": {"brief_id": newer, "ids": 5}}), encoding="utf-8")
    ctx = make_ctx(cfg)
    checked = executor.check(ctx).to_dict()
    assert checked["status"] == "sleeping" and not checked["error"] and not checked["sleep"]["error"], checked
    assert hand.open_briefs() == [] and consumed(cfg) == sorted([(newer, None), (older, newer)])
    said = ctx.state.view()["write_error"] or ""
    assert "'retiring_briefs' holds a record whose ids is a whole number where a list of ids belongs, read as " \
           "none" in said, said
