"""A file that refuses the purge scrub's rewrite (a full disk, a read-only file) is said once per change in the log
(when the set of refusing files changes, and when it clears), not on every tick, while /status keeps showing it
(the board's "scrub", read as scrub_error). On the real SerenMemory, no threads."""
from __future__ import annotations

import pytest

from hippocampus.cycle import executor
from tests.contract.test_purge_scrub import GARDEN, _quote_garden, holding, one_tick, purge_in_memory
from tests.contract.test_replay import first_draft, garden_denied_and_redrafted, latest


def _scrub_lines(caplog) -> list:
    """What the log says of the files the scrub could not (or can again) rewrite."""
    return [m for m in (r.getMessage() for r in caplog.records)
            if "still in" in m or "could not be" in m or "is gone now" in m]


@pytest.mark.parametrize("name", ["voice.json", "replays"])
def test_a_refusing_file_is_said_once_per_change_and_shown_while_it_lasts(make_ctx, hand, fake_model, caplog, name):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    folder = ctx.cfg.state_dir
    if name == "voice.json":
        _quote_garden(ctx, name)
        refusing = name
    else:
        refusing = next(p for p in holding(folder, [GARDEN]) if p.startswith("replays/"))
    blocker = folder / (refusing + ".tmp")
    blocker.mkdir()                              # its atomic rewrite fails, as on a full disk
    board: dict = {}
    ctx.wire(board.__setitem__)
    caplog.set_level("INFO")
    purge_in_memory(hand, core["id"])
    caplog.clear()
    for _ in range(3):
        one_tick(ctx)
    said = _scrub_lines(caplog)
    assert len(said) == 1 and refusing in said[0] and "still in" in said[0], said
    assert refusing in (board.get("scrub") or ""), board.get("scrub")
    assert refusing in holding(folder, [GARDEN])
    blocker.rmdir()                              # the disk has room again
    caplog.clear()
    for _ in range(2):
        one_tick(ctx)
    assert holding(folder, [GARDEN]) == {}
    cleared = _scrub_lines(caplog)
    assert len([m for m in cleared if "still in" in m]) == 0, cleared
    assert len([m for m in cleared if "now" in m and refusing in m]) == 1, cleared
    assert board.get("scrub") is None


def test_a_hand_damaged_packet_is_skipped_and_said_once_and_the_rest_are_scrubbed(make_ctx, hand, fake_model, caplog):
    """A packet whose `calls` holds a non-mapping (edited by hand) stopped the whole scrub on every tick: no other
    packet was scrubbed, and the log had a traceback each tick; the quality reader's report (read after its scrub)
    raised on it too, so the actor that runs the scrub crashed on every beat until it was left down."""
    import json

    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    hand.short("the rose garden needs pruning before winter", topic="garden")
    hand.short("pruned the climbing rose in the garden", topic="garden")
    hand.brief("the garden again")
    first_draft(ctx, hand)                                  # its prompt shows the core: a second packet holds it
    folder = ctx.cfg.state_dir
    held = sorted(p for p in holding(folder, [GARDEN]) if p.startswith("replays/"))
    assert len(held) == 2, held
    damaged = folder / held[0]
    packet = json.loads(damaged.read_text())
    packet["calls"].append("a line someone typed here")
    damaged.write_text(json.dumps(packet))
    caplog.set_level("INFO")
    purge_in_memory(hand, core["id"])
    caplog.clear()
    for _ in range(3):
        one_tick(ctx)                   # the check and the quality reader's pass (its scrub, then its report)
    assert sorted(holding(folder, [GARDEN])) == [held[0]]          # only the damaged packet keeps it
    said = _scrub_lines(caplog)
    assert len(said) == 1 and held[0] in said[0], said
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records if r.exc_info]
    damaged.write_text(json.dumps({**packet, "calls": packet["calls"][:-1]}))     # put right: scrubbed, said so
    caplog.clear()
    one_tick(ctx)
    assert holding(folder, [GARDEN]) == {}
    assert [m for m in _scrub_lines(caplog) if "gone now" in m and held[0] in m], _scrub_lines(caplog)
