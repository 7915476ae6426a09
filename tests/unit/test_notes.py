"""What a note in Memory is worth (cycle.notes), as a table: no Memory, no threads, no clock."""
from __future__ import annotations

import pytest

from hippocampus.cycle import notes

NOW = 1_800_000_000.0
KEY = "brief:abc"
YEAR = 365 * 86400.0


def slept(**meta) -> dict:
    return {"id": "n1", "metadata": {"topic": notes.SLEPT_TOPIC, "created_at": NOW - 10, "slept_at": NOW - 20,
                                     **meta}}


@pytest.mark.parametrize("meta, at, why", [
    ({}, NOW - 20, None),                                                      # what a copy writes
    ({"slept_at": NOW + 60}, NOW + 60, None),                                  # within the skew
    ({"slept_at": NOW + 67 * YEAR}, None, "in the future"),                   # 2093: item 2
    ({"slept_at": 1e300}, None, "in the future"),                             # item 3
    ({"slept_at": -5}, None, "not a time"),
    ({"slept_at": 0}, None, "not a time"),
    ({"slept_at": "NaN"}, None, "not a time"),
    ({"slept_at": "1800000000"}, None, "not a time"),
    ({"slept_at": True}, None, "not a time"),
    ({"slept_at": None}, None, "not a time"),
    ({"slept_at": 10 ** 400}, None, "not a time"),                             # too big for a float
    ({"slept_at": [NOW]}, None, "not a time"),
    ({"created_at": 1e300}, None, "created_at"),                              # the note's own fields overwrite it
    ({"created_at": "x"}, None, "created_at"),
    ({"created_at": NOW - 2 * YEAR}, None, "later than the note was written"),
    ({"created_at": NOW - 2 * YEAR, "slept_at": NOW - 2 * YEAR + 1}, NOW - 2 * YEAR + 1, None),   # old, but sane
])
def test_a_slept_note_is_a_sleep_only_with_sane_times(meta, at, why):
    got, said = notes.read_slept(slept(**meta), NOW)
    assert got == at
    assert (said is None) if why is None else (why in said), said


def test_notes_that_are_no_slept_note_are_neither_a_sleep_nor_malformed():
    for note in ({"metadata": {"topic": "other", "slept_at": 1e300}}, {"metadata": None}, {}, "text", None,
                 {"metadata": "a string"}):
        assert notes.read_slept(note, NOW) == (None, None)


def claim_note(gen=3, **meta) -> dict:
    fields = {"claim": KEY, "gen": gen, "copy": "c0ffee", "pid": 4242, "host": "box", "folder": "/state",
              "what": "sleeps on brief abc", "until": NOW + 600, "created_at": NOW - 5}
    fields.update(meta)
    return {"id": notes.note_id(KEY, gen if isinstance(gen, int) and not isinstance(gen, bool) else 0),
            "metadata": fields}


@pytest.mark.parametrize("note, why", [
    (claim_note(), None),
    (claim_note(until=NOW + notes.MAX_LEASE_SECONDS), None),                    # the longest lease, just written
    (claim_note(until=NOW + 70 * YEAR), "beyond the longest lease"),           # 2096: item 4
    (claim_note(until=1e300), "beyond the longest lease"),
    (claim_note(until="never"), "not a time"),                                 # item 4: was an error in the check
    (claim_note(until=None), "not a time"),
    (claim_note(until=float("inf")), "not a time"),
    (claim_note(created_at=NOW + 10 * YEAR, until=NOW + 10 * YEAR), "created_at"),
    ({**claim_note(), "id": "any-note-id"}, "its id is not the one"),          # item 4: any note id worked
    (claim_note(gen="a"), "generation"),
    (claim_note(gen=-1), "generation"),
    (claim_note(gen=2 ** 40), "generation"),
    (claim_note(gen=1.0), "generation"),
    (claim_note(pid=10 ** 30), "pid"),
    (claim_note(pid=0), "pid"),
    (claim_note(pid="4242"), "pid"),
    (claim_note(pid=True), "pid"),
    (claim_note(host=None), "host"),
    (claim_note(copy=7), "copy"),
    (claim_note(what=""), "what"),
    (claim_note(host="box\x1b[2J"), "its host holds control characters"),     # went as written into /status
    (claim_note(folder="/state\nERROR forged", what="x\x85"), "its folder, what hold control characters"),
    (claim_note(what="w" * 5000), "its what is over 1024 characters"),
])
def test_a_claim_is_a_claim_only_as_a_copy_writes_it(note, why):
    got, said = notes.read_claim(note, KEY, NOW)
    if why is None:
        assert said is None and got["gen"] == 3 and got["until"] == note["metadata"]["until"], (got, said)
    else:
        assert got is None and why in said, (got, said)


def test_the_readers_own_claims_are_held_to_their_form_only():
    """Its own clock wrote them (a test's clock a day ahead of Memory's stamp, say): never ignored for times."""
    ahead = claim_note(until=NOW + 86400 + 600)
    assert notes.read_claim(ahead, KEY, NOW + 86400)[1] == "its until 1800087000 is beyond the longest lease a " \
                                                            "copy writes"
    assert notes.read_claim(ahead, KEY, NOW + 86400, mine="c0ffee")[0]["until"] == NOW + 86400 + 600
    assert notes.read_claim(claim_note(until="never"), KEY, NOW, mine="c0ffee")[0] is None


def test_notes_that_claim_something_else_are_not_read_as_claims():
    assert notes.read_claim(claim_note(claim="brief:other"), KEY, NOW) == (None, None)
    assert notes.read_claim({"id": "x", "metadata": {"topic": "hippocampus, sleeping"}}, KEY, NOW) == (None, None)


@pytest.mark.parametrize("until, host, alive, why", [
    (NOW + 600, "box", True, None),
    (NOW + 600, "elsewhere", False, None),          # another host's pid cannot be looked at: the lease decides
    (NOW + 600, "box", False, "pid 4242 on this host) has exited"),
    (NOW, "box", True, "lease ran out"),
    (NOW - 1, "elsewhere", True, "lease ran out"),
])
def test_a_claim_holds_while_its_lease_runs_and_its_process_on_this_host_lives(until, host, alive, why):
    c, _ = notes.read_claim(claim_note(until=until, host=host), KEY, NOW)
    said = notes.stale(c, NOW, "box", lambda pid: alive)
    assert (said is None) if why is None else (why in said), said


def test_the_newest_claim_is_the_highest_generation():
    assert notes.newest([]) is None
    assert notes.newest([{"gen": 1}, {"gen": 7}, {"gen": 3}]) == {"gen": 7}


def count(n: int = 2, note_id: str = None, **meta) -> dict:
    """The note a copy writes for the n-th unusable redraft of attempt 1 of chain c1."""
    fields = {"topic": notes.UNUSABLE_TOPIC, "created_at": NOW - 10, "copy": "c0ffee", "pid": 4242, "host": "h",
              "folder": "/f", "cluster_id": "c1", "attempt": 1, "tries": n, **meta}
    return {"id": note_id or notes.unusable_id("c1", 1, n), "metadata": {k: v for k, v in fields.items()
                                                                        if v is not None}}


@pytest.mark.parametrize("note, tries, why", [
    (count(), 2, None),                                                        # what a copy writes
    (count(copy=None), None, "copy is not words"),
    (count(pid="4242"), None, "pid '4242' is not a process id"),
    (count(tries="2"), None, "count of tries '2'"),
    (count(tries=True), None, "count of tries True"),
    (count(tries=1e30), None, "count of tries 1e+30"),
    (count(tries=4), None, "count of tries 4"),
    (count(tries=3), None, "not those of try 3"),                              # another try's id
    (count(cluster_id="c2"), None, "its chain 'c2'"),                          # another chain's words, our id
    (count(created_at=NOW + YEAR), None, "in the future"),
    (count(cluster_id="c2", note_id=notes.unusable_id("c2", 1, 2)), None, None),     # another chain's count
    (count(attempt=2, note_id=notes.unusable_id("c1", 2, 2)), None, None),           # another attempt's
    (count(topic="hippocampus, slept"), None, None),
    ({"id": notes.unusable_id("c1", 1, 2), "metadata": "x"}, None, None),
    ("not a note", None, None),
])
def test_a_count_of_unusable_redrafts_counts_only_as_a_copy_writes_it(note, tries, why):
    got, said = notes.read_unusable(note, "c1", 1, 3, NOW)
    assert got == tries
    assert (said is None) if why is None else (why in said), said
