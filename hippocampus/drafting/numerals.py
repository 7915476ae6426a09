"""Numbers, dates and days in a text (pure), for the grounding guard: each number token normalised (1,000 = 1000,
03 = 3, 2.5 million = 2500000, any script's digits, a number in words as its digits), the numbers said with a unit
or currency, and the (day, month) a date or "5 March" names."""
from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

from hippocampus.drafting.measures import DECADE, given
from hippocampus.drafting.numwords import _ORDINALS, _SCALES, _SPELLED, norm, spelled

NUMBER = re.compile(r"(?:(?<![^\s(\[])[-\u2212\u2013]|(?<!\w)[Mm]inus[^\S\n]+)?(?<![A-Za-z\d])"   # -5: after a space
                    r"(?:\d{1,3}(?: \d{3}(?![^\W_]))+(?:[.,]\d+)?|\d+(?:[.,:/-]\d+)*)")  # 2 500 000 one; 2 500g two
_KILO = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)([kKmM])(?!\w)")    # 2k, 2.5K, 3m: thousands, millions
_MILLION = re.compile(r"(?<!\w)millions?(?!\w)", re.I)    # a word that makes a small m (5m) a million
_RACE = (re.compile(r"(?<!\w)(?:r[au]n(?:s|ning)?|jog\w*|rac(?:e[sd]?|ing))[^\S\n]+"
                    r"(?:(?:an?|the)[^\S\n]+(?:[^\W\d_]+[^\S\n]+)?)?\Z", re.I),     # ran the Berlin 10k too
         re.compile(r"[^\S\n]?-?(?:run|race)s?(?!\w)", re.I))       # ran a 5k, the 10k run: a race's distance, no 10000
_SEP = re.compile(r"[.,:/-]")
_DECIMAL = re.compile(r"\d+[.,]\d+")     # one point or comma: a decimal, which stands whole (0.05 is not 0.5)
_GROUPED = re.compile(r"\d{1,3}(?:\.\d{3})+,\d+|\d{1,3}(?:\.\d{3}){2,}")    # 1.000,50 and 2.500.000: thousands dots
_SCALED = re.compile(r"[^\S\n]+(dozen|hundred|thousand|million|billion)s?(?!\w)", re.I)   # 2.5 million
_ORDINAL_WORDS = set(_ORDINALS) - {"twice", "thrice"}
_MONTHS = {w: n for n, ws in enumerate(("january januar", "february februar feb", "march märz mar", "april apr",
                                        "may mai", "june juni", "july juli jul", "august aug", "september sep sept",
                                        "october oktober oct okt", "november nov", "december dezember dec dez"), 1)
           for w in ws.split()}      # a month's names (English, German; Jan, Jun are names too: not here)
_OF_PERSON = re.compile(r"(?<!\w)(?:with|met|told|asked|called|visited|married|saw|friend|sister|brother|daughter|"
                        r"son|wife|husband|partner|mother|father|colleague)[^\S\n]+(April|May|June|August)(?!\w)")


class Person(str):
    """A month's name said of a person (met June, her friend May): a name to check, not a month a date grounds."""


def persons(text: str) -> set:
    """The month names a normalised text says of a person."""
    return {m.group(1) for m in _OF_PERSON.finditer(text)}


_MONTH_DAY = re.compile(rf"(?<!\w)(?:{'|'.join(_MONTHS)})\.?[^\S\n]+\Z", re.I)    # March 3 500 people: 3, 500
_TH = r"(?:st|nd|rd|th)"
_DAY_MONTH = re.compile(rf"(?<![\w.,:/-])(?:(\d{{1,2}}){_TH}?(?:[^\S\n]+of)?[^\S\n]+({'|'.join(_MONTHS)})\.?"
                        rf"|({'|'.join(_MONTHS)})\.?[^\S\n]+(\d{{1,2}}){_TH}?)(?!\w)", re.I)   # 5 March, March 5th
_ORDINAL = re.compile(rf"(?<![\w.,:/-])(\d{{1,2}}){_TH}(?!\w)", re.I)        # the 5th: a day
_DATE = re.compile(r"\d+([/.-])\d+\1\d+")     # 2026-3-5, 5/3/2026: a day, a month and a year, no counts


def _num(token: str) -> str:
    if token[:5].casefold() == "minus":   # minus 5 is -5
        return "-" + _num(token[5:].strip())
    if token[0] in "-\u2212\u2013":          # a leading minus (-, −, –) makes another number: -5 is not 5
        return "-" + _num(token[1:])
    if " " in token:                   # 2 500 000, 1 000,50: a thousands space (any space, after norm) groups one
        token = token.replace(" ", "").replace(",", ".")       # number; its pieces are none (3 500 is 3500)
    if _GROUPED.fullmatch(token):      # one number, not a date of its pieces
        token = token.replace(".", "").replace(",", ".")
    if not re.match(r"0+,", token):    # 1,000 is 1000; 0,125 is a decimal comma
        token = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", token)
    if _DECIMAL.fullmatch(token):      # its fraction's digits as written; a decimal comma as a point
        whole, frac = _SEP.split(token)
        return f"{_digits(whole)}.{''.join(str(unicodedata.decimal(c)) for c in frac)}"
    return "".join(p if _SEP.fullmatch(p) else _digits(p) for p in re.split(f"({_SEP.pattern})", token) if p)


def _digits(run: str) -> str:
    """A run of digits in any script as ASCII without leading zeros: what str(int(run)) gives, for a run of any
    length (int() refuses more than 4,300 digits, and a fragment may hold a longer one)."""
    return "".join(str(unicodedata.decimal(c)) for c in run).lstrip("0") or "0"


def _is_range(token: str) -> bool:
    """Two whole numbers joined by a hyphen, the smaller first (6-8; 10-2 is a score or a date)."""
    ends = token.split("-")
    return len(ends) == 2 and all(e.isdigit() for e in ends) and (len(ends[0]), ends[0]) < (len(ends[1]), ends[1])


def _spelled_value(token: str) -> str:
    """The digits of a number written in words ("twenty five" -> "25"), or the token as it is."""
    found = spelled(token) if _SPELLED.fullmatch(token) else []
    return found[0][1] if len(found) == 1 else token


def numbers(text: str) -> list:
    """The number, date and time tokens of a text, normalised (1,000 = 1000, 03 = 3, 2.5 million = 2500000; any
    script's digits)."""
    return [n for _, _, n in _numbered(norm(text))]


def _numbered(text: str) -> list:
    """[(start, end, number)] for the numbers of a normalised text (2.5 million: to the end of million)."""
    out, pos = [], 0
    while m := NUMBER.search(text, pos):
        space = re.search(r"\d( )\d", m.group(0))
        if space and _MONTH_DAY.search(text, max(0, m.start() - 24), m.start()):    # a day after its month
            m = NUMBER.match(text, m.start(), m.start() + space.start(1))
        n, scale, end, pos = _num(m.group(0)), _SCALED.match(text, m.end()), m.end(), m.end()
        if scale and re.fullmatch(r"-?\d+(?:\.\d+)?", n):
            n, end = format((Decimal(n) * _SCALES[scale.group(1).casefold()]).normalize(), "f"), scale.end()
        decade = n.isdigit() and len(n) in (2, 4) and n.endswith("0") and DECADE.match(text, end)
        n, end = (n + "s", decade.end()) if decade else (n, end)        # the 1990s: a decade, no year
        out.append((m.start(), end, n))
    return out


def _said(text: str) -> list:
    """[(start, end, number)] for the numbers of a normalised text written in words, each one number."""
    return [(m.start(), m.end(), v[0][1]) for m in _SPELLED.finditer(text) for v in [spelled(m[0])] if len(v) == 1]


def _measured(text: str) -> list:
    """[(start, end, number, unit keys)] for the numbers of a text said with a unit or currency ($50, 5 km)."""
    text, out = norm(text), []
    for s, e, n in _numbered(text) + _said(text):      # fifty dollars too
        kilo = _KILO.match(text, s)             # $50k: 50000 dollars
        n, e = (_kilo(kilo), kilo.end()) if kilo and kilo.end() == e + 1 else (n, e)
        out += [(a, b, n, keys) for a, b, keys in [given(text, s, e)] if keys]
    return out


def _kilo(m: re.Match) -> str:
    return format((Decimal(_num(m.group(1))) * (1000 if m.group(2) in "kK" else 10 ** 6)).normalize(), "f")


def _magnitude(text: str, m: re.Match) -> bool:
    """Whether a source's number glued to k or m (2k, 5m) may be read as thousands or millions: a k unless it is
    a race's distance (ran 5k, a 10k run: 5k, 5 km, five k, never 5000 of anything), an M always, a small m
    (5 metres, 5 minutes) only said of money (£5m) or where the source has a word for millions."""
    if m.group(2) in "kK":
        return not (_RACE[0].search(text, max(0, m.start() - 40), m.start()) or _RACE[1].match(text, m.end()))
    return m.group(2) == "M" or bool(given(text, m.start(), m.end())[2]) or bool(_MILLION.search(text))


def _race(text: str, m: re.Match) -> bool:
    """A number glued to k that is a race's distance (ran 5k, the 10k run): 5 km, no 5000."""
    return m.group(2) in "kK" and not _magnitude(text, m)


def _is_ordinal(words: str) -> bool:
    """A number written in words says which one, not how many: the fifth, twenty-first (not twice)."""
    return re.split(r"[\s-]", words)[-1].casefold() in _ORDINAL_WORDS


def _days_of(token: str) -> set:
    """The (day, month) a date token may name: 2026-3-5 (year first) ("5", 3); 5/3/2026 (year last) ("5", 3) or
    ("3", 5); 2026-03 ("", 3)."""
    parts = _SEP.split(token)
    if ":" in token or token.startswith("-") or _DECIMAL.fullmatch(token) or len(parts) < 2:
        return set()
    if len(parts[0]) == 4 and len(parts[1]) <= 2:
        return {((parts + [""])[2], int(parts[1]))}
    if len(parts) == 3 and len(parts[2]) == 4:
        return {(d, int(m)) for d, m in (parts[:2], parts[1::-1]) if len(m) <= 2}
    return set()


def _days(text: str) -> list:
    """[(start, end, day, month)] for the days a normalised text says with their month (5 March, March 5th, the
    5th of March); "may 5" written small is no date."""
    out = []
    for m in _DAY_MONTH.finditer(text):
        day, month = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if month[0].isupper() or month.casefold() not in ("may", "mar"):
            out.append((m.start(), m.end(), _digits(day), _MONTHS[month.casefold()]))
    return out
