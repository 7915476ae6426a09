"""A redraft the small model answers but can never write (its answer unreadable every time) kept its chain open for
good: each tend asked the model again, and no new sleep started because the chain was open. After three such
answers in a row the chain is closed as a chain whose last attempt was denied is culled: its drafts closed, its
brief consumed, its review note gone; nothing denied lands, and the event, the log and /status say why. A model
that cannot be reached does not count (the chain waits for it), and the count survives a restart."""
from __future__ import annotations

import logging
import socket
from types import SimpleNamespace

from actors.board import Board
from hippocampus.cycle import executor
from hippocampus.cycle.sleep import REVIEW_TOPIC
from hippocampus.status.read import build_status
from tests.service.test_tend import garden_denied, scripted_model

UNREADABLE = {"content": "Sure! I would say the garden bloomed, citing f1."}      # not the JSON asked for
GAVE_UP = "the small model could not write the redraft after 3 tries"


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _status(ctx) -> dict:
    rt = SimpleNamespace(cfg=ctx.cfg, ctx=ctx, board=Board())
    ctx.wire(rt.board.put)
    ctx.state.save()                    # publishes the state to the board
    return build_status(rt)


def test_three_unreadable_redrafts_close_the_chain_and_say_why(make_config, make_ctx, hand, fake_model, caplog):
    ctx, first = garden_denied(make_ctx, hand, fake_model)
    brief = first["brief_id_used"]
    fake_model.responder = lambda body: dict(UNREADABLE)
    for _ in range(2):
        tended = executor.tend(ctx).to_dict()
        assert tended["model_failures"] and tended["closed"] == [], tended
    down = make_ctx(make_config(model={"url": _closed_port_url()}))     # restarted with the model unreachable
    assert executor.tend(down).to_dict()["error"]                  # not counted: the chain waits for it
    ctx = make_ctx(ctx.cfg)                                        # restarted again: the count is kept
    asked = len(fake_model.requests)
    with caplog.at_level(logging.WARNING, logger="hippocampus"):
        tended = executor.tend(ctx).to_dict()
    assert len(fake_model.requests) == asked + 1, "the third try was not asked"
    assert tended["closed"] == [first["id"]], tended
    assert {d["status"] for d in hand.drafts()} == {"closed"} and len(hand.drafts()) == 1   # nothing invented
    assert brief not in [b["id"] for b in hand.open_briefs()]
    assert not [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == REVIEW_TOPIC]
    [closed] = [e for e in ctx.events.list(limit=100) if e["type"] == "chain_closed"]
    assert GAVE_UP in closed["why"] and closed["denied"] == 1 and closed["landed"] == 1, closed
    assert [r for r in caplog.records if GAVE_UP in r.getMessage()], [r.getMessage() for r in caplog.records]
    status = _status(ctx)
    assert GAVE_UP in status["say"]["headline"], status["say"]
    hand.short("we planted tulips by the gate today", topic="garden")    # the next sleep: the note goes
    hand.short("the tulips by the gate came up red", topic="garden")
    hand.brief("the garden again")
    fake_model.responder = scripted_model
    assert executor.check(ctx).to_dict()["sleep"]["draft_id"]
    assert GAVE_UP not in _status(ctx)["say"]["headline"]


def test_a_usable_redraft_starts_the_count_again(make_ctx, hand, fake_model):
    ctx, first = garden_denied(make_ctx, hand, fake_model)
    fake_model.responder = lambda body: dict(UNREADABLE)
    for _ in range(2):
        assert executor.tend(ctx).to_dict()["model_failures"]
    fake_model.responder = scripted_model
    [again] = executor.tend(ctx).to_dict()["resubmitted"]
    hand.review(again["draft_id"], [{"op": 0, "verdict": "deny", "critique": "still not it; say: the roses"}])
    fake_model.responder = lambda body: dict(UNREADABLE)
    for _ in range(2):                                            # two more: five unreadable, never three in a row
        tended = executor.tend(ctx).to_dict()
        assert tended["model_failures"] and tended["closed"] == [], tended
    assert [d["status"] for d in hand.drafts() if d["attempt"] == 2] == ["reviewed"]


def test_a_hand_edited_count_that_is_no_number_is_read_as_none_and_said(make_ctx, hand, fake_model, caplog):
    import json

    ctx, first = garden_denied(make_ctx, hand, fake_model)
    path = ctx.cfg.sleep.resolved_state_path()
    for bad in ("x", None):
        saved = json.loads(path.read_text())
        path.write_text(json.dumps({**saved, "chain_unusable": {first["id"]: bad}}))
        ctx = make_ctx(ctx.cfg)                                     # restarted on the hand-edited file
        fake_model.responder = lambda body: dict(UNREADABLE)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="hippocampus"):
            tended = executor.tend(ctx).to_dict()
        assert tended["error"] is None and tended["model_failures"], tended     # the tend ran
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and repr(bad) in r.getMessage()
                and "chain_unusable" in r.getMessage()]
        assert said, [r.getMessage() for r in caplog.records]
        assert ctx.state.get("chain_unusable") == {first["id"]: 1}          # counted from none


def test_two_copies_on_one_memory_share_the_count(make_ctx, hand, fake_model, tmp_path):
    """Each copy kept its own count: taking turns on one chain they asked the model up to three times each. The
    count is the chain's, in Memory: the third unusable answer, whichever copy got it, closes the chain."""
    from hippocampus.cycle import claims, copies

    a, first = garden_denied(make_ctx, hand, fake_model)
    b = make_ctx(clock=a.clock, model={"url": fake_model.url}, sleep={"state_path": str(tmp_path / "b" / "state.json")})
    for ctx in (a, b):
        copies.announce(ctx)
    fake_model.responder = lambda body: dict(UNREADABLE)
    turns = [executor.tend(ctx).to_dict() for ctx in (a, b, a)]
    assert all(t["model_failures"] for t in turns) and not claims.alone(a) and not claims.alone(b), turns
    assert turns[-1]["closed"] == [first["id"]], turns                  # three in a row, across the copies
    assert {d["status"] for d in hand.drafts()} == {"closed"}
    assert not [n for n in hand.near() if "unusable" in str((n.get("metadata") or {}).get("topic"))]   # tidied


def _two_copies(make_ctx, hand, fake_model, tmp_path) -> tuple:
    """(a, b, the first draft): two copies on one Memory, each knowing the other, on a denied chain."""
    from hippocampus.cycle import copies

    a, first = garden_denied(make_ctx, hand, fake_model)
    b = make_ctx(clock=a.clock, model={"url": fake_model.url}, sleep={"state_path": str(tmp_path / "b" / "state.json")})
    for ctx in (a, b):
        copies.announce(ctx)
    return a, b, first


def _forge_try(url: str, cid: str, n: int, attempt: int = 1, **fields) -> str:
    """A note that looks like a copy's count of the n-th unusable redraft of chain cid, under that count's id."""
    import os
    import time
    import uuid

    from hippocampus.memory import MemoryClient

    stamp = {"copy": uuid.uuid4().hex, "pid": os.getpid(), "host": socket.gethostname(), "folder": "/elsewhere",
             "cluster_id": cid, "attempt": attempt, "tries": n}
    note_id = uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:unusable:{cid}:{attempt}:{n}").hex
    given = {k: v for k, v in {**stamp, **fields}.items() if v is not None}
    return MemoryClient(url).add_near(f"seren-hippocampus (pid 1 on x) could not use the small model's redraft of "
                                      f"chain {cid} ({n} of 3 tries in a row); nothing to do about it",
                                      topic="hippocampus, unusable redraft", expires_at=time.time() + 3600,
                                      trigger_type="event", trigger_value="seren-hippocampus unusable redraft",
                                      note_id=note_id, extra=given)["id"]


def test_forged_counts_of_unusable_redrafts_close_no_chain(make_ctx, hand, fake_model, memory, tmp_path, caplog):
    """Notes that merely look like the copies' counts (no copy stamp, a count that is no number, a huge count,
    another chain's) counted as tries: the chain was closed before the model was asked once. Only well-formed
    notes count; each malformed one is said in the log, with its id and why, and the count's own note takes its
    place: the third real try closes the chain."""
    a, b, first = _two_copies(make_ctx, hand, fake_model, tmp_path)
    cid = first["id"]
    forged = [_forge_try(memory.url, cid, 1, copy=None), _forge_try(memory.url, cid, 2, tries="2"),
              _forge_try(memory.url, cid, 3, tries=10 ** 30, cluster_id="another-chain")]
    fake_model.responder = lambda body: dict(UNREADABLE)
    asked = len(fake_model.requests)
    with caplog.at_level(logging.WARNING, logger="hippocampus"):
        tended = executor.tend(a).to_dict()
    assert len(fake_model.requests) == asked + 1 and tended["closed"] == [], tended     # asked: the first real try
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
            and "looks like seren-hippocampus's but" in r.getMessage()]
    for note_id, why in zip(forged, ("copy is not words", "'2'", "1e+30")):
        assert [s for s in said if note_id in s and why in s], (note_id, why, said)
    turns = [executor.tend(ctx).to_dict() for ctx in (b, a)]       # the squatters of the count's ids delay nothing
    assert [t["closed"] for t in turns] == [[], [cid]], turns


def test_a_count_of_unusable_redrafts_is_counted_once(make_ctx, hand, fake_model, memory, tmp_path):
    """Each well-formed count counts once, however often Memory lists it: the chain closes at the third try."""
    a, b, first = _two_copies(make_ctx, hand, fake_model, tmp_path)
    listed = a.memory.list_near
    a.memory.list_near = lambda *args, **kw: listed(*args, **kw) * 3       # every note listed three times
    fake_model.responder = lambda body: dict(UNREADABLE)
    turns = [executor.tend(ctx).to_dict() for ctx in (b, a, b)]
    assert [t["closed"] for t in turns] == [[], [], [first["id"]]], turns
