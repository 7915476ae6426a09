"""`ripple-claude DIR --yaml N` indents by N spaces: 0 to 64 (10000000000 ran out of memory building the
padding, a MemoryError traceback; -3 was quietly 0)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("given", ["10000000000", "65", "-3", "two"])
def test_an_indent_out_of_range_is_refused(capsys, given):
    from hippocampus.__main__ import build_parser

    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["ripple-claude", "/tmp", "--yaml", given])
    assert stopped.value.code == 2
    assert f"--yaml: expected a number of spaces, 0 to 64, not {given!r}" in capsys.readouterr().err


@pytest.mark.parametrize("given", ["0", "8", "64"])
def test_an_indent_in_range_is_taken(given):
    from hippocampus.__main__ import build_parser

    assert build_parser().parse_args(["ripple-claude", "/tmp", "--yaml", given]).yaml == int(given)


@pytest.mark.parametrize("given", ["1_0", "0x8"])
def test_an_indent_is_read_by_the_whole_number_rule_of_the_other_flags(capsys, given):
    """Found: --yaml read N with int(), which takes "1_0" as 10, where every whole-number flag refuses it."""
    from hippocampus.__main__ import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["ripple-claude", "/tmp", "--yaml", given])
    assert f"--yaml: expected a number of spaces, 0 to 64, not {given!r}" in capsys.readouterr().err
    assert build_parser().parse_args(["ripple-claude", "/tmp", "--yaml", "8.0"]).yaml == 8
