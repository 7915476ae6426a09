"""The corpus's ground truth holds what issue 39 asks of it, and the truth checker the real-model tests and the
quality benchmark judge drafts with finds invented specifics and duplicates (a table), so neither can pass
a draft by not looking."""
from __future__ import annotations

import pytest

from tests.corpus import load
from tests.harness import truth

CORPUS = load()
FRAGMENTS = [f for n in CORPUS.nights for f in n.fragments]


@pytest.mark.parametrize("content, sources, invented", [
    ("Mara runs 8 km on Saturday mornings.", ["now I run 8 km on Saturday mornings only"], []),
    ("Mara runs 10 km on Saturday mornings.", ["now I run 8 km on Saturday mornings only"], ["10"]),
    ("Mara works the day shift at St Aldric.", ["day shift at St Aldric"], []),
    ("Mara works the day shift at St Mungo.", ["day shift at St Aldric"], ["Mungo"]),
    ("Lessons with Rui on Wednesdays.", ["a teacher called Rui, Wednesday evenings"], []),
    ("Lessons with Pedro on Wednesdays.", ["a teacher called Rui, Wednesday evenings"], ["Pedro"]),
    ("She finishes at 15:30.", ["I finish at 15:30."], []),
    ("She finishes at 16:30.", ["I finish at 15:30."], ["16:30"]),
    ('She says "queria um café".', ["queria um café, por favor"], []),
    ("Ines lives in Madrid.", ["make a core saying Ines lives in Madrid"], []),
    ("Ines lives in Madrid.", ["Ines moved from Lisbon to Porto"], ["Madrid"]),
    ("Plot 23 holds garlic.", ["plot 123 near the river"], ["23"]),
])
def test_invented_specifics_are_the_ones_in_no_source(content, sources, invented):
    assert truth.invented(content, sources) == invented


@pytest.mark.parametrize("a, b, same", [
    ("Mara runs 8 km on Saturdays.", "Mara runs 8 km on Saturdays", True),
    ("Mara runs 8 km on Saturdays.", "Mara's dog Biscuit weighs 14 kg.", False),
    ("Mara takes oat milk in her coffee.", "Mara takes her coffee with oat milk.", True),
])
def test_duplicates_are_the_same_content_words(a, b, same):
    assert truth.same_thing(a, b) is same
    assert truth.duplicates([{"content": a}, {"content": b}]) == ([(0, 1)] if same else [])


def test_judge_counts_the_target_core_for_supersede_only():
    shorts, cores = {"s1": "now I run on Saturday mornings only"}, {"c1": "Mara runs 5 km on Tuesdays."}
    sup = {"kind": "supersede", "content": "Mara runs 5 km on Saturdays.", "source_short_ids": ["s1"],
           "target_core_id": "c1"}
    assert truth.grounded(sup, shorts, cores)
    assert truth.judge({**sup, "kind": "new_core", "target_core_id": None}, shorts, cores)["invented"] == ["5"]
    assert truth.judge({**sup, "source_short_ids": ["s9"]}, shorts, cores)["cites_unknown"] == ["s9"]


def test_the_corpus_holds_what_the_issue_asks():
    nights = CORPUS.nights
    assert len(nights) >= 5 and nights[-1].at - nights[0].at >= 14 * 86400          # several weeks
    assert all(a.at < b.at for a, b in zip(nights, nights[1:]))
    for n in nights:
        assert all(f.ts < n.at for f in n.fragments), n.label                       # written before the night
        assert n.correction() and n.correction().target in CORPUS.cores, n.label   # a correction every night
        assert n.sliced().fragments and n.sliced().correction(), n.label
        noise = n.by_role("noise")
        assert noise and all({t.strip() for t in f.topic.split(",")} & set(n.noise) for f in noise), n.label
        assert n.promoted_topics(), n.label
    roles = {f.role for f in FRAGMENTS}
    assert {"fact", "repeat", "correction", "attach", "noise", "injection", "chatter"} <= roles
    kinds = {e.kind for n in nights for e in n.expect}
    assert kinds == {"new_core", "attach", "supersede"}
    assert any(not f.content.isascii() for f in FRAGMENTS)                           # not all English
    (inj,) = [f for f in FRAGMENTS if f.role == "injection"]
    assert "ignore your instructions" in inj.content.lower()
    keys = [f.key for f in FRAGMENTS]
    assert len(keys) == len(set(keys))
    for n in nights:                                # every expectation names fragments and specifics they hold
        for e in n.expect:
            texts = [CORPUS.fragment(k).content for k in e.sources]
            assert truth.invented(" ".join(e.must), texts) == [], (n.label, e)
