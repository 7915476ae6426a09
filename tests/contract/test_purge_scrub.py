"""A memory purged in SerenMemory itself (POST /long/{id}/purge: its emergency purge, not this service's tidy)
leaves no copy of its text under this service's state folder after one tick and the quality reader's pass
(which reads Memory's tombstones): not in the replay packets, the events, the state or the voice card
(issue 28, item 3). On the real SerenMemory, no threads."""
from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess

import pytest

from hippocampus.cycle import executor
from hippocampus.store.capture import store_for
from hippocampus.replay.service import QualityWatch
from tests.contract.test_replay import FRAGMENTS, first_draft, garden_denied_and_redrafted, latest

GARDEN = "The rose garden by the gate bloomed early this year"


def purge_in_memory(hand, core_id: str) -> dict:
    """Memory's own purge, as a person or the main model runs it: no flag, no tidy of ours."""
    return hand._req("POST", f"/long/{core_id}/purge", json={"reason": "remove it now"})


def holding(folder, secrets: list) -> dict:
    """file (relative) -> the secrets its bytes hold, in plain or JSON-escaped form, for every file."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            raw = path.read_bytes()
            hits = [s for s in secrets if s.encode() in raw or json.dumps(s)[1:-1].encode() in raw]
            if hits:
                found[path.relative_to(folder).as_posix()] = hits
    return found


def files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
            for p in folder.rglob("*") if p.is_file()}


def one_tick(ctx) -> dict:
    """A check and the quality reader's pass, as the service's beat runs them."""
    report = executor.check(ctx).to_dict()
    QualityWatch(ctx).refresh()
    return report


def test_a_purge_made_in_memory_itself_leaves_its_text_in_no_file_after_one_tick(make_ctx, hand, fake_model):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)                                       # the chain lands: the garden core is in Memory
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    hand.short("the rose garden needs pruning before winter", topic="garden")
    hand.short("pruned the climbing rose in the garden", topic="garden")
    hand.brief("the garden again")
    later = first_draft(ctx, hand)                           # its prompt shows the core as a candidate
    # the text reaches the other files too: an event quoting the model, a voice card quoting a fragment
    ctx.emit("draft_failed", topic="garden", why=f"the model answered {json.dumps(GARDEN)} twice")
    ctx.cfg.voice.enabled = True
    from hippocampus.store.voice import VoiceCard
    ctx.voice = VoiceCard(ctx.cfg.state_dir / "voice.json", 2000, ctx.clock)
    ctx.voice.set(f"I am Wren. Never say '{FRAGMENTS['garden'][0]}' twice.")
    folder = ctx.cfg.state_dir
    secrets = [GARDEN] + FRAGMENTS["garden"]
    before = holding(folder, secrets)
    assert {"events.jsonl", "voice.json", f"replays/{first['id']}.json", f"replays/{later['id']}.json"} <= set(before)

    purge_in_memory(hand, core["id"])
    assert core["id"] in {t["id"] for t in hand.tombstones()}
    report = one_tick(ctx)
    assert report["purged"] == 0, "the tidy found nothing flagged: the purge was Memory's own"
    assert holding(folder, secrets) == {}
    for packet in (store_for(ctx.cfg).load(first["id"]), store_for(ctx.cfg).load(later["id"])):
        assert packet["purges"][-1]["ids"] == [core["id"]]
    tea = next(c for c in store_for(ctx.cfg).load(first["id"])["calls"] if c["topic"] == "tea")
    assert [e["content"] for e in tea["entries"]] == FRAGMENTS["tea"]      # what was not forgotten stays
    assert ctx.voice.current()["text"].startswith("I am Wren. Never say '[purged]'")
    assert any(e.get("why") == 'the model answered "[purged]" twice' for e in ctx.events.list(limit=50))

    kept = {n: v for n, v in files(folder).items() if n != "state.json"}   # a check writes last_check
    one_tick(ctx)                                            # an idle tick: the tombstone is already scrubbed
    after = {n: v for n, v in files(folder).items() if n != "state.json"}
    assert after == kept, "an idle tick rewrote files"


def test_a_restart_scrubs_the_purges_made_while_it_was_down_once(make_ctx, hand, fake_model):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    folder = ctx.cfg.state_dir
    assert holding(folder, [GARDEN])
    purge_in_memory(hand, core["id"])
    restarted = make_ctx(cfg=ctx.cfg)
    one_tick(restarted)
    assert holding(folder, [GARDEN] + FRAGMENTS["garden"]) == {}


def test_in_the_running_service_a_purge_in_memory_is_scrubbed_after_a_nudge(make_config, start_service, hand,
                                                                             fake_model):
    import requests

    from tests.contract.test_replay import scripted, seed
    from tests.harness.reviewer import wait_for

    fake_model.responder = scripted
    svc = start_service(make_config(model={"url": fake_model.url}))
    seed(hand, ("garden",))
    draft_id = requests.post(svc.url + "/sleep", timeout=60).json()["draft_id"]
    hand.approve_all(draft_id)
    assert requests.post(svc.url + "/tend", timeout=60).status_code == 200       # the chain lands
    core = next(e for e in hand.long() if e["content"] == "Something true about garden")
    folder = svc.runtime.cfg.state_dir
    secrets = [core["content"]] + FRAGMENTS["garden"]
    assert f"replays/{draft_id}.json" in holding(folder, secrets)
    purge_in_memory(hand, core["id"])
    requests.post(svc.url + "/nudge", timeout=5)             # a tick, and the quality reader's pass after it
    wait_for(lambda: holding(folder, secrets) == {}, timeout=15, what="the packets to forget the purged text")


def test_a_packet_that_could_not_be_rewritten_is_scrubbed_on_the_next_tick(make_ctx, hand, fake_model):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    folder = ctx.cfg.state_dir
    packet = next(iter(holding(folder, [GARDEN])))       # the redraft's packet
    assert packet.startswith("replays/")
    blocker = folder / (packet + ".tmp")
    blocker.mkdir()                      # the packet's rewrite fails (as on a full disk): it still holds the text
    purge_in_memory(hand, core["id"])
    one_tick(ctx)
    assert packet in holding(folder, [GARDEN])
    blocker.rmdir()                      # the disk has room again
    one_tick(ctx)
    assert holding(folder, [GARDEN] + FRAGMENTS["garden"]) == {}


def _quote_garden(ctx, name: str) -> None:
    """The garden's text where each of our own files would hold it."""
    if name == "voice.json":
        from hippocampus.store.voice import VoiceCard
        VoiceCard(ctx.cfg.state_dir / name, 2000, ctx.clock).set(f"I am Wren. Never say '{GARDEN}' twice.")
    elif name == "events.jsonl":
        ctx.emit("draft_failed", topic="garden", why=f"the model answered {json.dumps(GARDEN)} twice")
    elif name == "state.json":
        ctx.state.add_history({"kind": "tend", "error": f"the model answered {json.dumps(GARDEN)} twice"})
    else:                                                   # the model server's own output
        with open(ctx.cfg.state_dir / name, "a", encoding="utf-8") as fh:
            fh.write(f"prompt: {GARDEN}\n")


@pytest.mark.parametrize("name", ["voice.json", "events.jsonl", "state.json", "model.log"])
def test_a_file_that_could_not_be_rewritten_keeps_the_purge_owed_until_it_is_clean(make_ctx, hand, fake_model, name):
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    folder = ctx.cfg.state_dir
    _quote_garden(ctx, name)
    assert name in holding(folder, [GARDEN])
    if name == "model.log":                  # rewritten in place (its writer appends): an immutable file
        if subprocess.run(["chattr", "+i", str(folder / name)], capture_output=True).returncode:
            pytest.skip("chattr +i is not available here")
        unblock = lambda: subprocess.run(["chattr", "-i", str(folder / name)], check=True)   # noqa: E731
    else:                                    # written atomically: its .tmp cannot be made (as on a full disk)
        (folder / (name + ".tmp")).mkdir()
        unblock = (folder / (name + ".tmp")).rmdir
    try:
        purge_in_memory(hand, core["id"])
        one_tick(ctx)
        assert name in holding(folder, [GARDEN])
    finally:
        unblock()                            # the disk has room again
    restarted = make_ctx(ctx.cfg)            # and the service restarted before it wrote that file again
    one_tick(restarted)
    assert holding(folder, [GARDEN] + FRAGMENTS["garden"]) == {}


def test_another_programs_database_under_the_state_folder_is_named_not_corrupted(make_ctx, hand, fake_model, caplog):
    """The state folder may be shared: a database there holding the purged text is left whole (a byte replace of
    a shorter word breaks its pages), and the log names it; every file of ours is scrubbed as ever."""
    ctx, first = garden_denied_and_redrafted(make_ctx, hand, fake_model, GARDEN)
    hand.approve_all(latest(hand, 2)["id"])
    executor.tend(ctx)
    core = next(e for e in hand.long() if e["content"] == GARDEN)
    db_path = ctx.cfg.state_dir / "notes-app" / "notes.sqlite"
    db_path.parent.mkdir()
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.executemany("INSERT INTO notes VALUES (?)", [(f"{i}: {GARDEN}, said the note",) for i in range(50)])
        db.commit()
    purge_in_memory(hand, core["id"])
    one_tick(ctx)
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT count(*) FROM notes").fetchone() == (50,)
    assert holding(ctx.cfg.state_dir, [GARDEN] + FRAGMENTS["garden"]) == {"notes-app/notes.sqlite": [GARDEN]}
    assert any(str(db_path) in r.getMessage() and r.levelname == "WARNING" for r in caplog.records)


def test_nothing_is_owed_once_no_packet_is_left(make_ctx):
    """forget-owed.json said purges were still owed a scrub after the last packet was gone (the texts to remove are
    found in the packets: with none, nothing is left to scrub), and every sleep's purge read it again: it stayed
    in the state folder for good. Once nothing is owed, the file is gone."""
    from hippocampus.cycle import sleep
    from hippocampus.store.packets import OWED

    ctx = make_ctx()
    owed = store_for(ctx.cfg).folder / OWED
    owed.parent.mkdir(parents=True, exist_ok=True)
    owed.write_text(json.dumps(["purged-before-the-packets-went"]), encoding="utf-8")
    assert not store_for(ctx.cfg).paths()
    assert sleep.purge(ctx) == []                 # a sleep's purge, with nothing flagged
    assert not owed.exists() and store_for(ctx.cfg).owed() == []
