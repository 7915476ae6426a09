"""The voice card's history keeps every version (the brief: "nothing is overwritten. Every version keeps its
text, when, and why"): the 201st change must not drop the first."""
import json

from hippocampus.clock import Clock
from hippocampus.store.voice import VoiceCard


def test_every_version_of_the_card_is_kept_past_two_hundred(tmp_path):
    card = VoiceCard(tmp_path / "voice.json", 2000, Clock())
    for n in range(1, 206):
        card.set(f"I am Wren, version {n}.", why=f"change {n}")
    kept = json.loads((tmp_path / "voice.json").read_text(encoding="utf-8"))["versions"]
    assert [v["version"] for v in kept] == list(range(1, 206))
    assert kept[0]["text"] == "I am Wren, version 1." and kept[0]["why"] == "change 1"
    assert card.current()["version"] == 205
    assert [v["version"] for v in card.history(3)] == [205, 204, 203]
