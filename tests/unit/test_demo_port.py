"""`demo --port` takes what server.port takes, 0 to 65535, and says so before anything starts (99999 was wrapped
to another port by the socket, -1 failed after SerenMemory had started, in words about the host)."""
from __future__ import annotations

import time

import pytest


@pytest.mark.parametrize("given", ["99999", "65536", "-1"])
def test_a_port_out_of_range_is_refused_before_anything_starts(capsys, given):
    from hippocampus.__main__ import main

    t0 = time.monotonic()
    assert main(["demo", "--once", "--port", given]) == 2
    err = capsys.readouterr()
    assert f"seren-hippocampus demo: --port must be 0 to 65535, not {given}" in err.err
    assert "SerenMemory" not in err.out and time.monotonic() - t0 < 5       # nothing was started


@pytest.mark.parametrize("given", ["7_424", "7424.5", "port"])
def test_a_port_that_is_no_whole_number_is_refused_in_the_other_flags_words(capsys, given):
    """Found: `int()` took "7_424" as 7424, where server.port and every other whole-number flag refuse it."""
    from hippocampus.__main__ import main

    with pytest.raises(SystemExit) as refused:
        main(["demo", "--once", "--port", given])
    assert refused.value.code == 2
    assert f"--port: expected a whole number, not {given!r}" in capsys.readouterr().err
