from hippocampus.drafting.cluster import Cluster, cluster_by_tags, split_piles, tags
from hippocampus.drafting.hints import HintHits, haystack, hint_match, match_hints, threshold
from hippocampus.drafting.propose import Pile, mechanical_ops, plan_sleep


def row(i, content="text", topic=None, ts=None, **meta):
    md = dict(meta)
    if topic is not None:
        md["topic"] = topic
    if ts is not None:
        md["ts"] = ts
    return {"id": f"id{i}", "content": content, "metadata": md}


def test_tags_split_strip_lower_drop_blanks():
    assert tags(" Fish, DREAMS ,, ") == frozenset({"fish", "dreams"})
    assert tags("") == frozenset() and tags(None) == frozenset()


def test_cluster_keeps_order_untagged_last():
    rows = [row(1), row(2, topic="fish"), row(3, topic="cats"), row(4, topic="Fish"), row(5, topic=" ")]
    cl = cluster_by_tags(rows)
    assert [c.topic for c in cl] == ["fish", "cats", None]
    assert [[e["id"] for e in c.entries] for c in cl] == [["id2", "id4"], ["id3"], ["id1", "id5"]]


def test_cluster_compares_with_anchor_only():
    # b,c is close to the second member (a,b,c: 2/3) but not to the anchor (a: 0)
    rows = [row(1, topic="a, b"), row(2, topic="a, b, c"), row(3, topic="b, c, d")]
    cl = cluster_by_tags(rows)
    assert [[e["id"] for e in c.entries] for c in cl] == [["id1", "id2"], ["id3"]]
    assert cl[0].topic == "a, b"
    assert cl[0].tags == frozenset({"a", "b", "c"})


def test_cluster_joins_best_pile_at_half():
    rows = [row(1, topic="x"), row(2, topic="a, b"), row(3, topic="a, b, x")]
    cl = cluster_by_tags(rows)  # id3: 1/3 with x, 2/3 with a,b
    assert [[e["id"] for e in c.entries] for c in cl] == [["id1"], ["id2", "id3"]]
    rows = [row(1, topic="a, b"), row(2, topic="a, c")]  # 1/3 < 0.5
    assert len(cluster_by_tags(rows)) == 2


def test_split_piles_oldest_first():
    rows = [row(1, ts=30), row(2, ts=10), row(3), row(4, ts=20), row(5, ts=5)]
    piles = split_piles(rows, 2)
    assert [[e["id"] for e in p] for p in piles] == [["id3", "id5"], ["id2", "id4"], ["id1"]]


def test_hint_match_rules():
    hay = "fish, dreams || i keep dreaming about swimming fish"
    t = {"fish", "dreams"}
    assert hint_match("swimming fish", t, hay, False)  # exact
    assert hint_match("dreams", t, hay, False)  # tag and substring
    assert hint_match("Fish", set(), "fish ||", False)
    assert not hint_match("dreamer swims", t, hay, False)  # strict: no words rule
    assert hint_match("dreamed swims", t, hay, True)  # stems: dream(ed)->dream..., swim(s)->swim
    assert not hint_match("the fish", set(), "x || fish", True)  # fewer than 2 words after stop list
    assert not hint_match("cars boats planes", t, hay, True)
    # 2 of 3 words seen = 66% >= 60%
    assert hint_match("fish swimming tractor", t, hay, True)
    # 1 of 2 = 50%
    assert not hint_match("fish tractor", t, hay, True)


def test_haystack_and_match_hints():
    c = Cluster("Fish", [row(1, "Swimming Fish", "fish"), row(2, "a dream", "fish")])
    assert haystack(c) == "fish || swimming fish\na dream"
    hits = match_hints(c, ["FISH swimming", "weather"], ["a dream", "dreaming fish"])
    assert hits.promote == ["fish swimming"]
    assert hits.noise == ["a dream"]  # strict: "dreaming fish" is no exact/tag match


def test_threshold():
    assert threshold(3, HintHits([], [])) == 3
    assert threshold(3, HintHits(["x"], [])) == 1
    assert threshold(3, HintHits([], ["y"])) == 10 ** 6
    assert threshold(3, HintHits(["x"], ["y"])) == 10 ** 6


def test_plan_promote_noise_unmatched():
    shorts = [row(1, "fish one", "fish"), row(2, "cats one", "cats"), row(3, "work", "work"),
              row(4, "work two", "work")]
    plan = plan_sleep(shorts, promote_hints=["fish"], noise_hints=["cats"], min_evidence=2, pile_max=12)
    assert [p.topic for p in plan.piles] == ["fish", "work"]  # promote -> 1 is enough; work has 2
    assert plan.below_threshold == 1  # cats: noise
    assert plan.hint_hits == {"promote": {"fish": ["fish"]}, "noise": {"cats": ["cats"]}}
    plan = plan_sleep(shorts, promote_hints=[], noise_hints=[], min_evidence=3, pile_max=12)
    assert plan.piles == [] and plan.below_threshold == 4


def test_plan_noise_wins_pinned_overrides_verbatim_skips_threshold():
    shorts = [row(1, "cats", "cats"), row(2, "cats said: 'exactly this'", "cats", verbatim=True),
              row(3, "dogs", "dogs", pinned=True)]
    plan = plan_sleep(shorts, promote_hints=["cats"], noise_hints=["cats"], min_evidence=3, pile_max=12)
    assert plan.verbatim_ops == [{
        "kind": "verbatim", "content": "cats said: 'exactly this'", "topic": "cats",
        "source_short_ids": ["id2"], "evidence_count": 1,
        "rationale": "preserved word for word at the person's request", "target_core_id": None}]
    assert [p.topic for p in plan.piles] == ["dogs"]
    assert plan.below_threshold == 1


def test_plan_splits_piles_and_mechanical():
    shorts = [row(i, "x" * i, "fish", ts=100 - i) for i in range(1, 6)] + [row(9, "untagged thing")]
    plan = plan_sleep(shorts, promote_hints=[], noise_hints=[], min_evidence=1, pile_max=2)
    assert [[e["id"] for e in p.entries] for p in plan.piles] == [["id5", "id4"], ["id3", "id2"], ["id1"], ["id9"]]
    assert plan.piles[-1].topic is None
    ops = mechanical_ops(plan.piles[0])
    assert ops == [{"kind": "new_core", "content": "xxxxx", "topic": "fish", "source_short_ids": ["id5", "id4"],
                    "evidence_count": 2, "target_core_id": None,
                    "rationale": "mechanical: 2 fragment(s) on 'fish', longest kept; no model to judge attach/supersede"}]
    assert mechanical_ops(Pile(None, [], HintHits())) == []


def test_a_noise_hint_inside_another_word_silences_nothing():
    """Found: the brief's noise hint "rain" (the one-off shower) matched the running "training" topic inside its
    words, and noise wins over promote, so the training the brief promoted was never drafted."""
    shorts = [row(1, "Interval training at the track", "training"), row(2, "Hill training again", "training"),
              row(3, "It rained hard at noon", "weather")]
    plan = plan_sleep(shorts, promote_hints=["training"], noise_hints=["rain"], min_evidence=2, pile_max=12)
    assert [p.topic for p in plan.piles] == ["training"], plan
    assert plan.hint_hits["noise"] == {"rain": ["weather"]}      # "rained": the hint opens the word
    plan = plan_sleep(shorts, promote_hints=[], noise_hints=["rained hard"], min_evidence=1, pile_max=12)
    assert [p.topic for p in plan.piles] == ["training"] and plan.hint_hits["noise"] == {"rained hard": ["weather"]}
