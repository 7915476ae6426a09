"""The copies' notes in Memory ("slept", claims, counts of unusable redrafts) read as data, never trusted as written.

Any local program can write a near-term note, so a note counts only if every field is what a copy writes: times
are finite numbers after 0, none later than the note's own created_at plus the longest lease a copy ever writes
(created_at itself no later than now, with a small skew), a sleep no later than now; a claim's id is the one its
key and generation give, a count's the one its chain, attempt and try give. A claim from this host whose process
has exited is stale, as is one past its lease. Anything else is malformed: not a claim, not a sleep and not a
count, with the reason in words. Pure: no Memory, no clock.
"""
from __future__ import annotations

import math
import uuid
from typing import Callable, Optional

SLEPT_TOPIC = "hippocampus, slept"
UNUSABLE_TOPIC = "hippocampus, unusable redraft"      # the notes that count a chain's unusable redrafts
CLOCK_SKEW_SECONDS = 300.0           # how far the copies' and Memory's clocks may disagree
MAX_LEASE_SECONDS = 12 * 3600.0      # the longest lease any copy writes (claims.lease_seconds is capped by it)
MAX_GEN = 2 ** 31                    # a claim's generation: 0 <= gen < MAX_GEN
MAX_PID = 2 ** 22                    # the largest pid a POSIX or Windows host hands out
TEXT_KEYS = ("copy", "host", "folder", "what")
MAX_TEXT = 1024                      # the longest word a copy stamps (a state folder's path, what a claim is for)


def note_id(key: str, gen: int) -> str:
    """The id of the claim note on `key` at generation `gen` (Memory keeps the first note posted under an id)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:claim:{key}:{gen}").hex


def unusable_id(cid: str, attempt: int, n: int) -> str:
    """The id of the note that counts the n-th unusable redraft of this attempt of the chain."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"seren-hippocampus:unusable:{cid}:{attempt}:{n}").hex


def _small(value, top: int) -> bool:
    """Whether value is a whole number (no bool) from 0 up to, not including, top."""
    return not isinstance(value, bool) and isinstance(value, int) and 0 <= value < top


def stamp_problem(meta: dict, keys: tuple = TEXT_KEYS[:3]) -> Optional[str]:
    """Why the note's copy stamp (its pid and `keys`) is not one a copy writes, or None."""
    pid = meta.get("pid")
    if not _small(pid, MAX_PID + 1) or not pid:
        return f"its pid {repr(pid)[:64]} is not a process id"
    if bad := [k for k in keys if not isinstance(meta.get(k), str) or not meta.get(k)]:
        return f"its {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not words"
    if bad := [k for k in keys if len(meta[k]) > MAX_TEXT]:
        return f"its {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} over {MAX_TEXT} characters"
    if bad := [k for k in keys if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in meta[k])]:
        return f"its {', '.join(bad)} {'holds' if len(bad) == 1 else 'hold'} control characters"
    return None


def sane_time(value) -> Optional[float]:
    """A real, finite number of seconds after the epoch, or None (strings, bools, NaN, infinities, <= 0)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        at = float(value)
    except OverflowError:           # an int too big for a float
        return None
    return at if math.isfinite(at) and at > 0 else None


def _created(meta: dict, now: float) -> tuple:
    """(created_at, why not): Memory's stamp, which a note's own fields can overwrite, so it is checked too."""
    created = sane_time(meta.get("created_at"))
    if created is None:
        return None, f"its created_at {meta.get('created_at')!r} is not a time"
    if created > now + CLOCK_SKEW_SECONDS:
        return None, f"its created_at {created:.0f} is in the future"
    return created, None


def read_slept(note: dict, now: float) -> tuple:
    """(slept_at, why not) for a "slept" note; (None, None) for a note that is no "slept" note at all."""
    meta = note.get("metadata") if isinstance(note, dict) else None
    if not isinstance(meta, dict) or meta.get("topic") != SLEPT_TOPIC:
        return None, None
    created, why = _created(meta, now)
    if why:
        return None, why
    at = sane_time(meta.get("slept_at"))
    if at is None:
        return None, f"its slept_at {meta.get('slept_at')!r} is not a time"
    if at > now + CLOCK_SKEW_SECONDS:
        return None, f"its slept_at {at:.0f} is in the future"
    if at > created + MAX_LEASE_SECONDS + CLOCK_SKEW_SECONDS:
        return None, f"its slept_at {at:.0f} is later than the note was written"
    return at, None


def read_claim(note: dict, key: str, now: float, mine: str = "") -> tuple:
    """(the claim as {gen, copy, pid, host, folder, what, until, id}, why not) for a note claiming `key`;
    (None, None) for a note that claims nothing, or something else. mine: the reader's own copy, whose notes
    are held to their form only (its clock wrote them; at worst a forged one makes it do its own work)."""
    meta = note.get("metadata") if isinstance(note, dict) else None
    if not isinstance(meta, dict) or meta.get("claim") != key:
        return None, None
    gen = meta.get("gen")
    if not _small(gen, MAX_GEN):
        return None, f"its generation {gen!r} is not a small whole number"
    if note.get("id") != note_id(key, gen):
        return None, f"its id is not the one a claim on {key} at generation {gen} has"
    if why := stamp_problem(meta, TEXT_KEYS):
        return None, why
    created, why = _created(meta, now)
    if why and meta["copy"] != mine:
        return None, why
    until = sane_time(meta.get("until"))
    if until is None:
        return None, f"its until {meta.get('until')!r} is not a time"
    if meta["copy"] != mine and until > created + MAX_LEASE_SECONDS + CLOCK_SKEW_SECONDS:
        return None, f"its until {until:.0f} is beyond the longest lease a copy writes"
    return {**{k: meta[k] for k in TEXT_KEYS}, "gen": gen, "pid": meta["pid"], "until": until, "id": note["id"],
            "created_at": created}, None


def read_unusable(note: dict, cid: str, attempt: int, most: int, now: float) -> tuple:
    """(n, why not) for a note counting the n-th (1 to `most`) unusable redraft of this attempt of chain `cid`;
    (None, None) for a note that counts none of them (another topic, chain or attempt)."""
    meta = note.get("metadata") if isinstance(note, dict) else None
    if not isinstance(meta, dict) or meta.get("topic") != UNUSABLE_TOPIC:
        return None, None
    ids = [unusable_id(cid, attempt, n) for n in range(1, most + 1)]
    if note.get("id") not in ids and (meta.get("cluster_id") != cid or meta.get("attempt") != attempt):
        return None, None
    tries = meta.get("tries")
    if not _small(tries, most + 1) or not tries:
        return None, f"its count of tries {tries!r} is not a whole number from 1 to {most}"
    if meta.get("cluster_id") != cid or note.get("id") != ids[tries - 1]:
        return None, f"its id and its chain {meta.get('cluster_id')!r} are not those of try {tries} on chain {cid}"
    why = stamp_problem(meta) or _created(meta, now)[1]
    return (None, why) if why else (tries, None)


def stale(claim: dict, now: float, here: str, alive: Callable[[int], bool]) -> Optional[str]:
    """Why a well-formed claim no longer holds (its lease ran out, or its process on this host has exited),
    or None: it holds."""
    if claim["until"] <= now:
        return "its lease ran out"
    if claim["host"] == here and not alive(claim["pid"]):
        return f"its process (pid {claim['pid']} on this host) has exited"
    return None


def newest(claims: list) -> Optional[dict]:
    """The claim of the highest generation, or None."""
    return max(claims, key=lambda c: c["gen"], default=None)
