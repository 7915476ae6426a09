"""The units and currencies a number is said with (pure), for the grounding guard: "$50" is not grounded by
"50 euros", nor "5 km" by "5 miles". One table: a unit's key (its symbol, case-folded) -> the words naming it.
"""
from __future__ import annotations

import re

UNIT_WORDS = {"°c": "degree|celsius|centigrade|grad|degré|grado", "°f": "degree|fahrenheit", "l": "litre|liter",
              "kb": "kilobyte", "mb": "megabyte", "gb": "gigabyte", "tb": "terabyte", "hz": "hertz",
              "khz": "kilohertz", "mhz": "megahertz", "ghz": "gigahertz", "€": "euro|eur", "$": "dollar|usd|buck",
              "£": "pound|gbp", "km": "kilometre|kilometer", "mi": "mile", "kg": "kilogram|kilo",
              "lb": "pound"}     # what names a unit besides its symbol ("pound": money or a weight)
_BEFORE = re.compile(r"(?:[€$£]|(?<![^\W\d_])(?:eur|usd|gbp))[^\S\n]?\Z", re.I)     # $50, EUR 50
_AFTER = re.compile(r"(?:[^\S\n]|-)?(°[^\S\n]?[cf]|[€$£]|[^\W\d_]+)(?!\w)", re.I)      # 50 €, 5 km, 50-euro


_MAGNITUDES = {"k": r"k[mgbw]|kilo", "m": r"m\Z|million|met(?:re|er)|min"}   # what k or m glued to a number is


def initial(word: str) -> str:
    """The letter a unit's word gives a number glued to it (8 hours: 8h), or "" where that letter is a magnitude
    the word is not: 2 kids is no 2k, 2 mice no 2m (a thousand, km, kg; a million, a metre, a minute are)."""
    w = word.casefold()
    return w[0] if w[0] not in _MAGNITUDES or re.match(_MAGNITUDES[w[0]], w) else ""


def key(symbol: str) -> str:
    return "".join(symbol.split()).casefold()


def units(said: str) -> frozenset:
    """The keys of the units a symbol or word names ("degrees": both °C and °F), none for another word."""
    s = key(said)
    return frozenset(k for k, words in UNIT_WORDS.items() for w in {s, s.removesuffix("s")}
                     if w == k or w in words.split("|"))


def given(text: str, start: int, end: int) -> tuple:
    """(start, end, unit keys) of the number at text[start:end] with the currency before it or the unit after
    it, if any: the span grows to take them in."""
    before, after = _BEFORE.search(text, max(0, start - 5), start), _AFTER.match(text, end)   # USD 50: 4 back
    keys = units(before.group(0)) if before else frozenset()
    if after and units(after.group(1)):
        keys, end = keys | units(after.group(1)), after.end()
    return (before.start() if before else start), end, keys


def hour(n: str) -> str:
    """A time's digits as the guard reads them, a full hour without its minutes: 7:00 (read "7:0") is 7."""
    return n[:-2] if n.endswith(":0") else n


def clock(n: str, x: str) -> str:
    """A time said with am or pm ("2:30", "p") on the 24-hour clock, as the guard reads it: "14:30"."""
    h, _, m = n.partition(":")
    return f"{int(h) % 12 + (12 if x == 'p' else 0)}:{m or '0'}"


def meridiem(n: str):
    """A time of the 24-hour clock that can only be am or pm (0:xx, 13:00 to 23:59) as its 12-hour digits and
    "a" or "p" (("2", "p") for 14:0); None for any other."""
    t = re.fullmatch(r"(\d{1,2}):(\d{1,2})", n)
    if not t or int(t.group(2)) > 59 or not (int(t.group(1)) == 0 or 13 <= int(t.group(1)) <= 23):
        return None
    return hour(f"{int(t.group(1)) % 12 or 12}:{t.group(2)}"), "a" if t.group(1) == "0" else "p"


DECADE = re.compile(r"['’]?s(?!\w)")      # after 1990 or 90: the 1990s, the '90s


def decades(n: str) -> set:
    """The decades a whole number falls in, as the guard writes them: 1994 the 1990s and the '90s (a year of the
    1900s only: 2026 is not the 20s of an age); 93 the 90s."""
    if not n.isdigit() or len(n) not in (2, 4):
        return set()
    return {n[:-1] + "0s"} | ({n[2] + "0s"} if len(n) == 4 and n.startswith("19") else set())
