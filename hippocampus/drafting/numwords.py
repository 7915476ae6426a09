"""Numbers written in (English) words, for the grounding guard (pure): thirty is 30, twenty-five 25, two hundred
200, a dozen 12, half a dozen 6, the fifth 5, twice 2, minus five -5."""
from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

_UNITS = {w: n for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split(), 1)}
_TENS = {w: n * 10 for n, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)}
_SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_ORDINALS = {w: n for n, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
                                        "twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth "
                                        "nineteenth twentieth".split(), 1)} | {"thirtieth": 30, "twice": 2, "thrice": 3}
_NUM_WORD = "(?:" + "|".join(sorted({**_UNITS, **_TENS, **_SCALES, **_ORDINALS}, key=len, reverse=True)) + r")(?!\w)"
_SPELLED = re.compile(rf"(?<!\w)(?<!\d )(?:minus\s+|half\s+an?\s+)?{_NUM_WORD}"
                      rf"(?:(?:[\s-]+|\s+and\s+){_NUM_WORD})*", re.I)


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


def spelled(text: str) -> list:
    """[(words, value)]: the numbers of a text written in (English) words, each as written and as digits: thirty
    is 30, twenty-five 25, two hundred 200, a dozen 12, half a dozen 6, the twenty-first 21; "two three" is two
    numbers."""
    out = []
    for m in _SPELLED.finditer(norm(text)):
        words, total, cur, last, first = [], 0, 0, "", len(out)
        half, minus = (m.group(0)[:n].casefold() == w for n, w in ((4, "half"), (5, "minus")))
        for w in re.findall(r"\w+", m.group(0)):
            lw = w.casefold()
            if lw == "and":
                continue
            if not last and ((half and lw in ("half", "a", "an")) or (minus and lw == "minus")):
                words.append(w)
                continue
            if words and lw not in _SCALES and (last in _UNITS or last in _ORDINALS or (last in _TENS and lw in _TENS)):
                out.append((" ".join(words), str(total + cur)))      # a new number begins
                words, total, cur = [], 0, 0
            if lw in ("thousand", "million", "billion"):
                total, cur = total + max(cur, 1) * _SCALES[lw], 0
            elif lw in _SCALES:
                cur = max(cur, 1) * _SCALES[lw]
            else:
                cur += _UNITS.get(lw) or _TENS.get(lw) or _ORDINALS[lw]
            words.append(w)
            last = lw
        out.append((" ".join(words), str(total + cur)))
        if half:        # half a dozen: of the first number
            v = Decimal(out[first][1]) / 2
            out[first] = (out[first][0], str(v.to_integral_value()) if v == v.to_integral_value() else str(v))
        if minus:       # minus five is -5
            out[first] = (out[first][0], "-" + out[first][1])
    return out
