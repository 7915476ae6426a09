"""The grounding guard's numbers read as the fragment means them: an ordinal (the 5th, the fifth) is a place or
a day, no count; a number glued to "m" (5m) is metres or minutes unless the fragment says it is millions; a day
said with its month (5 March) needs that day of that month. Each row: what the model drafted against what its
fragments say, and whether it reaches Memory."""
from __future__ import annotations

import pytest

from tests.unit.test_guard_units import kept


@pytest.mark.parametrize("content,fragment,is_kept", [
    ("Anna adopted 5 cats for the garden", "Anna adopted cats for the garden on the 5th (2026-04-07)", False),
    ("Anna adopted 5 cats for the garden", "Anna adopted cats for the garden for the fifth time (2026-04-07)",
     False),
    ("Anna adopted 21 cats for the garden", "Anna adopted cats on the twenty-first (2026-04-07)", False),
    ("Anna adopted cats for the garden on the 5th", "Anna adopted cats for the garden on the fifth (2026-04-07)",
     True),
    ("Anna adopted cats for the fifth time", "Anna adopted cats for the 5th time (2026-04-07)", True),
    ("Anna adopted cats for the 5th time", "Anna adopted 5 cats for the garden (2026-04-07)", True),
    ("Anna adopted 5 cats for the garden", "Anna adopted 5 cats on the 5th (2026-04-07)", True),
])
def test_an_ordinal_grounds_an_ordinal_or_a_day_not_a_count(content, fragment, is_kept):
    """"on the 5th" or "the fifth time" says which one, not how many: "5 cats" is invented; the same ordinal
    said again (5th for fifth) is grounded, and a count grounds its ordinal as before."""
    assert kept(content, fragment) is is_kept


@pytest.mark.parametrize("content,fragment,is_kept", [
    ("Anna has 5 million followers online", "Anna has followers online, swam 5m in a pool (2026-04-07)", False),
    ("Anna has 5 million followers online", "Anna has followers online, waited 5m for a bus (2026-04-07)", False),
    ("Anna swam 5 metres underwater in the pool", "Anna swam 5m underwater in the pool (2026-04-07)", True),
    ("Anna waited 5 minutes for the bus", "Anna waited 5m for the bus (2026-04-07)", True),
    ("Anna swam 5m underwater in the pool", "Anna swam 5m underwater in the pool (2026-04-07)", True),
    ("Anna sold the flat for 5 million pounds", "Anna sold the flat for £5m (2026-04-07)", True),
    ("Anna has 5 million followers online", "Anna has 5M followers online (2026-04-07)", True),
    ("Anna has 5 million followers online", "Anna has 5m followers online, millions (2026-04-07)", True),
])
def test_a_number_glued_to_a_small_m_is_no_million_without_a_word_for_it(content, fragment, is_kept):
    """5m in a fragment may be 5 metres or 5 minutes; it grounds 5,000,000 only where the fragment says money
    (£5m), writes a capital M, or has a word for millions."""
    assert kept(content, fragment) is is_kept


@pytest.mark.parametrize("content,fragments,is_kept", [
    ("Met Anna at the gym on 5 March", ("Met Anna at the gym on 5 April (2026-03-07)",), False),
    ("Met Anna at the gym on 5 March", ("Met Anna at the gym (2026-04-05)", "Met Anna at the gym (2026-03-07)"),
     False),
    ("Met Anna at the gym on March 5th", ("Met Anna at the gym on 5 April (2026-03-07)",), False),
    ("Met Anna at the gym on 5 March", ("Met Anna at the gym on 5 March (2026-04-07)",), True),
    ("Met Anna at the gym on 5 March", ("Met Anna at the gym (2026-04-09)", "Met Anna at the gym (2026-03-05)"),
     True),
    ("Met Anna at the gym on 5 March", ("Met Anna at the gym on 05/03/2026",), True),
])
def test_a_day_with_its_month_needs_a_date_of_that_day_in_that_month(content, fragments, is_kept):
    """"5 March" against a fragment's 5 April and a date in March is invented: the day and the month must be one
    date's, not each from another."""
    assert kept(content, *fragments) is is_kept
