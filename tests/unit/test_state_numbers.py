"""A time in the state file that is no finite number (NaN, Infinity: json reads both) is no time: read as absent
and named, as a time written as words is, so bedtime and /status never reckon with it."""
from __future__ import annotations

from hippocampus.store.state import State


def test_a_time_that_is_nan_or_infinity_is_read_as_absent_and_named(tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{"last_slept_at": NaN, "last_sleep_ok_at": Infinity, "first_check_at": 1700000000.0, '
                    '"history": [{"kind": "tend", "at": -Infinity}, {"kind": "sleep", "at": 1700000100.0}]}',
                    encoding="utf-8")
    state = State(path)
    assert state.get("last_slept_at") is None and state.get("last_sleep_ok_at") is None
    assert state.get("first_check_at") == 1700000000.0
    assert state.get("history") == [{"kind": "sleep", "at": 1700000100.0}]
    said = state.read_error or ""
    assert "'last_slept_at' holds a number that is not finite (nan) where a number belongs" in said, said
    assert "'last_sleep_ok_at' holds a number that is not finite (inf)" in said, said
    assert "'history' holds 1 row whose parts are of another kind" in said, said
