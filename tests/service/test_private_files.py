"""Private files: the state folder is 0700 and every file in it 0600 after a sleep (POSIX)."""
from __future__ import annotations

import json
import os
import stat

import pytest
import requests

from tests.service.test_durability import seed

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes (Windows: the profile's ACL)")


def mode(path) -> str:
    return oct(stat.S_IMODE(os.stat(path).st_mode))


def test_after_a_sleep_the_state_folder_is_0700_and_its_files_0600(make_config, start_service, hand):
    seed(hand)
    cfg = make_config(voice={"enabled": True})
    folder = cfg.sleep.resolved_state_path().parent
    assert not folder.exists()
    svc = start_service(cfg)
    base = svc.url
    assert requests.put(base + "/voice", json={"text": "I write in the first person."}, timeout=5).status_code == 200
    assert requests.post(base + "/sleep", timeout=60).json()["draft_id"]
    requests.post(base + "/nudge", timeout=5)
    names = sorted(p.name for p in folder.iterdir())
    assert {"state.json", "events.jsonl", "voice.json"} <= set(names), names
    assert mode(folder) == oct(0o700)
    assert {n: mode(folder / n) for n in names} == {n: oct(0o600) for n in names}


def test_files_an_older_version_left_readable_are_made_0600_at_start(make_config, start_service, tmp_path):
    cfg = make_config()
    folder = cfg.sleep.resolved_state_path().parent
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    (folder / "state.json").write_text(json.dumps({"history": []}), encoding="utf-8")
    (folder / "events.json").write_text(json.dumps({"events": [{"type": "sleep_done", "at": 1.0, "seq": 1}]}))
    other = folder / "not-ours.txt"
    other.write_text("someone else's file")
    for p in (folder / "state.json", folder / "events.json", other):
        os.chmod(p, 0o644)
    svc = start_service(cfg)
    assert [e["type"] for e in requests.get(svc.url + "/events", timeout=5).json()["entries"]] == ["sleep_done"]
    assert mode(folder / "state.json") == oct(0o600)
    assert mode(folder / "events.jsonl") == oct(0o600) and not (folder / "events.json").exists()
    assert mode(other) == oct(0o644), "a file the service did not write is left as it was"
    assert mode(folder) == oct(0o755), "a folder the service did not make is left as it was"


def test_a_state_folder_laid_out_before_has_its_replays_and_files_made_private_at_start(
        make_config, start_service, caplog):
    cfg = make_config(voice={"enabled": True})
    folder = cfg.sleep.resolved_state_path().parent
    replays = folder / "replays"
    (replays / "old").mkdir(parents=True)
    packet = {"draft_id": "d1", "calls": [{"topic": "garden", "prompt": "the rose garden by the gate"}]}
    (replays / "d1.json").write_text(json.dumps(packet), encoding="utf-8")
    (replays / "forget-owed.json").write_text("[]", encoding="utf-8")
    (replays / "old" / "d0.json").write_text(json.dumps({**packet, "draft_id": "d0"}), encoding="utf-8")
    (folder / "state.json").write_text(json.dumps({"history": []}), encoding="utf-8")
    (folder / "events.jsonl").write_text("", encoding="utf-8")
    (folder / "voice.json").write_text(json.dumps({"versions": []}), encoding="utf-8")
    (folder / "ripple.log").write_text("a ripple ran\n", encoding="utf-8")
    for d in (folder, replays, replays / "old"):
        os.chmod(d, 0o755)
    files = [p for p in folder.rglob("*") if p.is_file()]
    for p in files:
        os.chmod(p, 0o644)
    caplog.set_level("INFO", logger="hippocampus.store")
    svc = start_service(cfg)
    assert requests.get(svc.url + "/health", timeout=5).status_code == 200
    assert {p.relative_to(folder).as_posix(): mode(p) for p in files} == \
        {p.relative_to(folder).as_posix(): oct(0o600) for p in files}
    assert mode(replays) == oct(0o700) and mode(replays / "old") == oct(0o700)
    said = " ".join(r.getMessage() for r in caplog.records if "made private" in r.getMessage())
    for name in ("replays/", "replays/old/", "replays/d1.json", "replays/old/d0.json", "state.json", "ripple.log"):
        assert name in said, said
