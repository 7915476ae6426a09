"""Words and specifics for the grounding guard (pure): an operation's content words and the specifics it states
(numbers, dates and times, proper names, quoted words), and whether its sources hold them. The numbers and dates
of one text are read in numerals.py.

Invariant: nothing here assumes English for the specifics: words are Unicode words, digits of any script are
numbers, a script written without spaces is compared in character pairs, a line in Title Case names no one,
and the stopwords (for the content-word share only) span several European languages. English adds to that, never
replaces it: its number words (thirty, the fifth, twice) are numbers too, and English and German month names
are grounded by a date in that month.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from decimal import Decimal
from typing import Iterable

from hippocampus.drafting.measures import UNIT_WORDS as _UNIT_WORDS, clock, decades, hour, meridiem
from hippocampus.drafting.measures import initial, key as _unit_key
from hippocampus.drafting.numerals import (NUMBER, _DATE, _DECIMAL, _KILO, _MONTHS, _ORDINAL, _SEP, _days,
                                           _days_of, _digits, _is_ordinal, _is_range, _kilo, _magnitude, _measured,
                                           _num, _numbered, _race, _said, _spelled_value, Person,
                                           numbers, persons)
from hippocampus.drafting.numwords import norm, spelled
from hippocampus.drafting.stopwords import NAMES_TOO, STOP, SUBJECT_NEXT, is_common, verb_after

DUPLICATE_SHARE = 0.8      # of the shorter text's content words in the other ...
MATCH_SHARE = 0.7          # ... and of the longer text's in the shorter: a near-duplicate
NAME_ENDINGS = ("n", "s", "ns")   # what a name's stem may gain and stay the name (Annan, Anna; not Paula, Paul)

_WORD = re.compile(r"[^\W_]+")
_NO_SPACE = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_VERBAL = ("ing", "ed", "ly")   # the endings of a verb's or adverb's forms, which a name seldom has
_ADVERB = re.compile(r"[^\W\d_]{2,}(?:[bcdfghjkmnpqstvwxz]|e|[au]l|[^\W\d_]{2}i|ar)ly")  # Mostly, Finally (no Emily)
_NAME_S = ("as", "is", "os", "us")    # Thomas, Chris, Carlos, Marcus: a name's ending, hardly a verb's -s form
# the subject after a sentence's opener; not an aside after a name ("Bertrand, she said, ...")
_SUBJECT = (r",?[^\S\n]+(?:I|you|he|she|it|we|they)(?!\w)"
            r"(?![^\S\n]+(?:said|says|told|tells|thinks|thought|added|adds)\b)")
_AT_START, _IN_CAPITALS = "at a sentence's start", "in a Title Case or capitals line"
_SUFFIXES = ("ing", "ies", "ied", "ed", "es", "ly", "s", "e")
_UNIT = re.compile(r"(?<=\d)[^\S\n]?(°[^\S\n]?[CF]|[KMGT]B|[kMG]?Hz|L)(?!\w)")    # 5 °C, 500 GB: units, not names
_IDENT = re.compile(rf"(?!.*{_NO_SPACE.pattern})(?:\d+[^\W\d_s]|[^\W\d_]+\d[^\W_]*)")  # 12B, A4, q3, B12 (1990s: no)
_PARTS = (re.compile(r"(?<!\w)([^\W\d_]+)[ -](\d[^\W_]*)(?!\w)"),    # what grounds one: B-12, 12 A, 8 hours (8h)
          re.compile(r"(?<!\w)(\d+)[ -]?([^\W\d_]+)"))
_MERIDIEM = re.compile(r"(?<![\d.,:/-])(\d{1,2}(?::\d{2})?)\s?([ap])\.?m\.?(?!\w)", re.I)     # 10pm, 7:30 a.m.
_AFTER = re.compile(r"[^\S\n]+([^\W\d_]+)")       # the word after a number: its unit
_SENTENCE_END = re.compile(r"[.!?…\n•]\s*[\"'“‘«(\[*-]*\s*$")     # not a colon: "Partners: Bertrand" names him
_DOT = re.compile(r"\.\s*")
_SPELT_OUT = {"dr": "doctor", "prof": "professor", "st": "street|saint", "mt": "mount", "ave": "avenue",
              "rd": "road"}     # what grounds an abbreviation besides itself: Dr. by doctor
_TITLE = re.compile(r"[A-Z]|Dr|Mr|Mrs|Ms|Mx|Prof|St|Sr|Jr|g|e|vs|cf")   # whose dot ends no sentence (e.g., i.e.)
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|«([^»\n]{1,200})»|„([^“”\n]{1,200})[“”]"
                     r"|「([^」\n]{1,200})」|『([^』\n]{1,200})』|(?<!\w)'([^'\n]{1,200})'(?!\w)"
                     r"|(?<!\w)‘([^‘’\n]{1,200})’(?!\w)|‹([^‹›\n]{1,200})›")
_APOSTROPHE = str.maketrans("’ʼ", "''")         # I’m is I'm
_VAGUE = {"dozens": (24, 200), "hundreds": (200, 1000), "thousands": (2000, 10 ** 6),   # by a number this size
          "millions": (2 * 10 ** 6, 10 ** 9), "billions": (2 * 10 ** 9, 10 ** 12)}
_VAGUE_WORD = re.compile(r"(?<!\d )(?<!\w)(dozens|hundreds|thousands|millions|billions)(?!\w)"
                         r"(?!\s+of\s+(?:thousands|millions|billions))", re.I)     # hundreds of thousands: by the last
_IDIOM = ("one", "first", "second")     # alone: "one of them", "at first", "a second", unchecked
_LISTED = re.compile(rf"^[^\S\n]*\d{{1,2}}[.)](?=[^\S\n]+[^\W\d_])(?![^\S\n]+(?:{'|'.join(_MONTHS)})\.?(?!\w))",
                     re.M | re.I)     # "1." or "2)" opening a line: a list's marker (7. März: a date)


# ------------------------------------------------------------------ words


def _stem(word: str) -> str:
    w = word.casefold()
    return next((w[:-len(suf)] for suf in _SUFFIXES if w.endswith(suf) and len(w) - len(suf) >= 3), w)


def _name_stem(word: str) -> str:
    """A name without a plural's or genitive's ending, four letters kept: Smiths Smith, Annas Anna; James is no
    jam, Golding no gold (the content words' stems would make them so); Simone is no Simon, Louise no Louis.
    A Latin letter's accent is no part of it (José is Jose, a small model leaves accents off)."""
    w = word.casefold()
    bare = w if w.isascii() else "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    w = bare if bare.isascii() else w
    return next((w[:-len(suf)] for suf in ("es", "s") if w.endswith(suf) and len(w) - len(suf) >= 4), w)


def content_words(text: str) -> set:
    """The stems of a text's content words: case-folded, stopwords and numbers out; a script written without
    spaces (Chinese, Japanese, Thai) in character pairs."""
    out: set = set()
    for tok in _WORD.findall(norm(text)):
        for part in re.split(f"({_NO_SPACE.pattern})", tok):
            if not part:
                continue
            if _NO_SPACE.fullmatch(part):
                out.update(part[i:i + 2] for i in range(max(1, len(part) - 1)))
            elif not part.isdigit() and len(part) >= 3 and part.casefold() not in STOP:
                out.add(_stem(part))
    return out


def _found(stem: str, pool: set, endings: tuple = ()) -> bool:
    """`stem` is in `pool`, or begins or is begun by a word there; by one of `endings` if given (a name's
    inflection, Finnish Annan for Anna, where Annabelle and Paula are other names)."""
    if stem in pool:
        return True
    return len(stem) >= 4 and any(len(p) >= 4 and (p.startswith(stem) or stem.startswith(p)) and (
        not endings or max(p, stem, key=len)[min(len(p), len(stem)):] in endings) for p in pool)


def _terms(text: str) -> set:
    """A text's content words and numbers, a number written in words as its digits."""
    said = spelled(text)
    words = {_stem(w) for ws, _ in said for w in re.findall(r"\w+", ws)}
    return (content_words(text) - words) | set(numbers(text)) | {v for _, v in said}


def near_duplicate(a: str, b: str) -> bool:
    """Nearly the same words (numbers count as words here, by value: thirty is 30): DUPLICATE_SHARE of the shorter
    text's words are in the longer one, and MATCH_SHARE of the longer text's in the shorter one."""
    wa, wb = _terms(a), _terms(b)
    if not wa or not wb:
        return " ".join(norm(a).casefold().split()) == " ".join(norm(b).casefold().split())
    common = len(wa & wb)
    return common / min(len(wa), len(wb)) >= DUPLICATE_SHARE and common / max(len(wa), len(wb)) >= MATCH_SHARE


# ------------------------------------------------------------------ specifics


def names(text: str) -> list:
    """Capitalised words not at the start of a sentence, nor stopwords or common English words ("habits: Meeting",
    "(Usually"); none in a Title Case or shouted line (most words capitalised, its small words too if it has any,
    no other word written small: Anna Schmidt and Bertrand Weber is none, nor Anna met Bertrand Weber)."""
    return _capitals(text)[0]


def _capitals(text: str) -> tuple:
    """(the names checked, [(where, word)] for the capitalised words left unchecked: a sentence's first, or every
    one of a Title Case or shouted line). Each line is judged on its own: a heading is no sentence below it."""
    text, words, last = norm(text), [], None        # words: (line, word, opens a sentence)
    units = {i for u in _UNIT.finditer(text) for i in range(u.start(1), u.end(1))} | {
        i for a, b, _, _ in _measured(text) for i in range(a, b)}      # and EUR 50, 5 km: no names
    for m in _WORD.finditer(text):
        w, prev, last = m.group(0), last, m
        if m.start() in units or _IDENT.fullmatch(w) or w.isdigit():   # checked as a unit or an identifier
            continue
        before = text[:m.start()]
        titled = prev and _TITLE.fullmatch(prev.group(0)) and _DOT.fullmatch(text, prev.end(), m.start())
        opens = not before.strip() or (not titled and _SENTENCE_END.search(before))
        words.append((before.count("\n"), w, bool(opens)))
    checked, unsure = [], []
    for n in dict.fromkeys(line for line, _, _ in words):
        starts = [w for line, w, opens in words if line == n and opens and w[0].isupper()]
        rest = [w for line, w, opens in words if line == n and not opens]
        caps = [w for w in rest if w[0].isupper()]
        small = any(w.islower() and w in STOP for w in rest)
        plain = any(w.islower() and len(w) > 2 and w not in STOP for w in rest)    # "Anna met Bertrand": a sentence
        if len(rest) >= 3 and len(caps) > len(rest) * 0.6 and not plain and (
                not small or any(len(w) > 1 and w.casefold() in STOP for w in caps)):
            unsure += [(_IN_CAPITALS, w) for w in starts + caps if not _common(text, w)]
        else:
            checked += [w for w in caps if not _common(text, w)]
            unsure += [(_AT_START, w) for w in starts if not _common(text, w)]
    return checked, unsure


def _common(text: str, word: str) -> bool:
    """A capitalised word whose capital says nothing that names no one: a stopword (not Will, Ella), a common
    English word or an adverb."""
    return (word.casefold() in STOP and word.casefold() not in NAMES_TOO) or is_common(word) or _adverb(text, word)


def unchecked_names(text: str, sources: Iterable[str]) -> list:
    """[(where, word)] for the capitalised words names() does not check that no source holds in any case, as
    written, as a name's inflection, as another form of its word (Climbs by climbed) or number (Dogs by dog)."""
    sources, known = tuple(sources), known_of(tuple(sources))
    unsure = [(where, w) for where, w in _capitals(text)[1] if not known.has("names", w)
              and not any(len(s) >= 3 and _name_stem(s) in known.names for s in _numbers_of(w))]
    pool = set().union(*(content_words(s) for s in sources)) if unsure else set()
    return [(where, w) for where, w in unsure if not any(
        len(f) >= 4 and f in pool for f in {_name_stem(w), _stem(w) if w.casefold().endswith(_VERBAL) else ""})
        and not (where == _AT_START and _opener(norm(text), w))]


def _numbers_of(word: str) -> set:
    """What a plural's singular may be (Dogs dog, Boxes box, Puppies puppy; James is no jam: -es only after s, x,
    z, ch, sh), and a word's plural (Dog dogs)."""
    w = word.casefold()
    return {w[:-1] if w.endswith("s") and not w.endswith("ss") else "", w[:-3] + "y" if w.endswith("ies") else "",
            w[:-2] if re.search(r"(?:[sxz]|[cs]h)es\Z", w) else "", w + "s", w + "es"}


def _opener(text: str, word: str) -> bool:
    """A sentence's first word that opens it before its subject ("However, she", "Maybe they"), or reads as a verb
    with no subject before it ("Adores green tea", "Hiking with Anna"): it ends like a verb's form (-s, -ed, -ing;
    -as, -is, -os, -us end names: Lucas, Chris) and the word after it is written small and is no verb, for a name
    is followed by its verb, at once or after a small word's phrase: James climbed, Fred and Anna, Golding wrote,
    Thomas is, Marcus, ..., James from work climbed, Fred with Anna is."""
    if word[1:].islower() and re.search(rf"(?<!\w){re.escape(word)}{_SUBJECT}", text):
        return True
    after = re.search(rf"(?<!\w){re.escape(word)}[^\S\n]+([^\W\d_]+)", text)
    w = after.group(1) if after and after.group(1).islower() else ""
    if word == "Will" and w and w not in STOP and w not in SUBJECT_NEXT and not w.endswith(("ed", "s")):
        return True         # Will go climbing: a verb (a name is followed by its own: Will climbed, Will is)
    if len(word) < 4 or not word[1:].islower() or not word.endswith(("s", "ed", "ing")) or word.endswith(_NAME_S):
        return False
    if not w or (w in STOP and not word.endswith("ing") and verb_after(text[after.end():])):   # James from work
        return False        # climbed; after an -s word an -s word is a plural as often as a verb (Adores cats)
    return not (w.endswith(("ed",) if word.endswith("s") else ("ed", "s")) or w in SUBJECT_NEXT or is_common(w))


def _adverb(text: str, word: str) -> bool:
    """A capitalised word that reads as an adverb ("Finally, Anna", "Mostly walks", "habits: Typically"): it ends
    as one (-ly, not as Emily, Kelly, Sally, Carly do) and no "is" or "and" follows it."""
    if not word[1:].islower() or not _ADVERB.fullmatch(word.casefold()):
        return False
    after = re.search(rf"(?<!\w){re.escape(word)},?[^\S\n]+([^\W\d_]+)", text)
    return not after or after.group(1) not in SUBJECT_NEXT


def quoted(text: str) -> list:
    return [" ".join(next(g for g in m.groups() if g).casefold().split()).translate(_APOSTROPHE)
            for m in _QUOTED.finditer(norm(text))]


class Known:
    """The specifics a set of sources holds: number tokens and their parts, word stems, the flattened text."""

    def __init__(self, sources: Iterable[str]):
        sources = [norm(s) for s in sources if s]
        words = [w for s in sources for w in _WORD.findall(s)]
        self.numbers: set = set()
        self.dates: list = []       # the parts of each date or time, together (a decimal's are no numbers)
        self.days: set = set()      # (day, month) of each date, as far as it says ("" for no day)
        self.ordinals = {_digits(m.group(1)) for s in sources for m in _ORDINAL.finditer(s)} | {
            v for s in sources for w, v in spelled(s) if _is_ordinal(w)}     # the 5th, the fifth: 5, no count
        for text in sources:
            days = _days(text)
            self.days.update((d, m) for _, _, d, m in days)
            self.dates += [{d, str(m)} for _, _, d, m in days]
            spans = [(a, b) for a, b, _, _ in days] + [m.span() for m in _ORDINAL.finditer(text)]
            self._numbers([t for a, _, t in _numbered(text) if not any(x <= a < y for x, y in spans)])
        self.numbers.update(v for s in sources for w, v in spelled(s) if not _is_ordinal(w))   # nine cats: 9 cats
        self.numbers.update(_kilo(m) for s in sources for m in _KILO.finditer(s) if _magnitude(s, m))   # 2k: 2000
        self.meridiem = {(hour(_num(m.group(1))), m.group(2).lower()) for s in sources for m in _MERIDIEM.finditer(
            s)} | {m for m in map(meridiem, self.numbers) if m}        # 14:00 is 2pm, and 2pm 14:00
        self.numbers.update(clock(n, x) for n, x in self.meridiem)
        self.alone: dict = {}       # a whole number said alone -> the words after it ("" for none)
        for n, after in (x for s in sources for x in _alone(s)):
            self.alone.setdefault(n, set()).add(after)
        self.names = {_name_stem(w) for w in words}
        self.months = {m for _, m in self.days} | {_MONTHS[w.casefold()] for w in words if w.casefold() in _MONTHS
                                                   and (w[0].isupper() or w not in ("may", "mar"))}   # not "we may"
        parts = [m.groups() for s in sources for p in _PARTS for m in p.finditer(s)]
        self.idents = {w.casefold() for w in words if _IDENT.fullmatch(w)} | {
            (a + b).casefold() for a, b in parts if not a.isdigit() or len(b) == 1}
        self.initials = {(a + initial(b)).casefold() for a, b in parts if a.isdigit() and b.casefold() not in STOP
                         and initial(b)}       # 8h by 8 hours; no 2k by 2 kids
        self.units = {_unit_key(m.group(1)) for s in sources for m in _UNIT.finditer(s)}
        self.given: dict = {}       # a number -> the units or currencies its sources say it with (50 -> {€})
        races = [(_num(m.group(1)), {"km"}) for s in sources for m in _KILO.finditer(s) if _race(s, m)]
        for n, keys in [(n, keys) for s in sources for _, _, n, keys in _measured(s)] + races:   # ran 5k: 5 km
            self.given.setdefault(n, set()).update(keys)
        dotted = {f"{n[:-3]}.{n[-3:]}": n for n in self.numbers if n.isdigit() and 4 <= len(n) <= 6}
        self.numbers.update(dotted)                 # 1200 is 1.200 written the German way (1.2 stays 1.2)
        self.given.update({d: self.given[n] for d, n in dotted.items() if n in self.given})
        self.flat = " \n ".join(" ".join(s.casefold().split()) for s in sources).translate(_APOSTROPHE)

    def _numbers(self, tokens: list) -> None:
        """Takes in a source's number tokens: a date's or time's parts together, and a time's parts as numbers."""
        for tok in tokens:
            self.numbers.add(tok)
            sign, tok = ("-", tok[1:]) if tok.startswith("-") else ("", tok)
            if not _DECIMAL.fullmatch(tok):
                if not sign:                           # -5 holds no 5
                    self.dates.append(set(p for p in _SEP.split(tok) if p))
                    self.days.update(_days_of(tok))
                    self.numbers.update(() if _DATE.fullmatch(tok) else self.dates[-1])     # 2026-03-05 holds no 3
            elif not tok.split(".")[1].strip("0") and len(tok.split(".")[1]) < 3:    # 45.00 holds 45 (1.000: 1000?)
                self.numbers.add(sign + tok.split(".")[0])

    def has(self, rule: str, token: str) -> bool:
        said = _measured(token) if rule == "numbers" else []
        if len(said) == 1 and said[0][:2] == (0, len(norm(token))):     # $50: said with a unit its sources give
            return bool(said[0][3] & self.given.get(said[0][2], set())) or (   # that number, or they give it none
                said[0][2] in self.numbers and not self.given.get(said[0][2]))
        if rule == "numbers":       # a date or time by its parts in one (5/3 in 2026-03-05), a range (6-8) by its
            if token.casefold() in _VAGUE:                       # hundreds: by the word or a number 200-999
                lo, hi = _VAGUE[token.casefold()]
                return _words_in(token.casefold(), self.flat) or any(
                    lo <= Decimal(n) < hi for n in self.numbers if re.fullmatch(r"\d+(?:\.\d+)?", n))
            if _KILO.fullmatch(token) and _kilo(_KILO.fullmatch(token)) in self.numbers:
                return True
            if _IDENT.fullmatch(token):                          # 12B as written (12 A, B-12; 8h by 8 hours,
                return token.casefold() in self.idents or (      # a 10K by 10 km)
                    (token[-1].islower() or token[-1] == "K") and token.casefold() in self.initials)
            if token[:-1].isdigit() and token.endswith("s"):      # the 1990s by the word or a year in it
                return token in self.numbers or any(token in decades(n) for n in self.numbers.union(*self.dates))
            if _unit_key(token) in _UNIT_WORDS:                  # a unit (°C) by its symbol or its word (degrees)
                words = _UNIT_WORDS[_unit_key(token)]
                return _unit_key(token) in self.units or bool(re.search(rf"(?<!\w)(?:{words})s?(?!\w)", self.flat))
            day = _days(token)                   # 5 March: by a date of that day in that month (not by 5 April
            if day and day[0][:2] == (0, len(token)):            # and a date in March); a month no source
                _, _, d, month = day[0]                          # has is left to the names check to report
                return (d, month) in self.days or (month not in self.months and any(d == x for x, _ in self.days))
            th = _ORDINAL.fullmatch(token)                       # the 5th, the fifth: a day of a date, an
            if th or _is_ordinal(token):                         # ordinal, or a 5
                n = _digits(th.group(1)) if th else _spelled_value(token)
                return n in self.numbers or n in self.ordinals or any(n in d for d in self.dates)
            token = _spelled_value(token)                        # ends; a decimal only whole; thirty as 30
            said = _MERIDIEM.fullmatch(token)                    # 10 pm: by 10 pm, or 10 where no 10 am
            if said:
                n, x = hour(_num(said.group(1))), said.group(2).lower()
                other = (n, "p" if x == "a" else "a")
                return (n, x) in self.meridiem or (n in self.numbers and other not in self.meridiem)
            if token.startswith("-"):                            # -5 only as -5
                return token in self.numbers
            parts = set(p for p in _SEP.split(token) if p)
            if _is_range(token):    # its ends said of the same thing: 6 hours, 8 hours (not 6 cups, 8 hours)
                a, b = (self.alone.get(e) for e in token.split("-"))
                return token in self.numbers or bool(a and b and ("" in a or "" in b or a & b))
            return token in self.numbers or (not _DECIMAL.fullmatch(token) and (len(parts) > 1 or len(token) == 4)
                                             and any(parts <= d for d in self.dates))    # 2026: a year
        if rule == "names" and token.casefold() in _MONTHS and not isinstance(token, Person):   # a month by its
            return _MONTHS[token.casefold()] in self.months     # name or a date in that month (met June: a name)
        spelt = _SPELT_OUT.get(token.casefold()) if rule == "names" else None
        if spelt and re.search(rf"(?<!\w)(?:{spelt})s?(?!\w)", self.flat):     # Dr. by doctor, St. by street
            return True
        if rule == "names":
            return _found(_name_stem(token), self.names, NAME_ENDINGS)
        return _words_in(token, self.flat)


@functools.lru_cache(maxsize=32)
def known_of(sources: tuple) -> Known:
    """Known(sources), kept: one pile's check asks of the same sources again and again (a long one costs)."""
    return Known(sources)


def _alone(text: str) -> list:
    """[(number, the stem of the word after it or "")] for the whole numbers of a text, in digits or words."""
    text = norm(text)
    found = [(m.end(), _num(m.group(0))) for m in NUMBER.finditer(text) if not _ORDINAL.match(text, m.start())]
    found += [(e, n) for s, e, n in _said(text) if not _is_ordinal(text[s:e])]
    out = []
    for end, n in found:
        if n.isdigit():
            w = _AFTER.match(text, end)
            out.append((n, _stem(w.group(1)) if w and w.group(1).casefold() not in STOP else ""))
    return out


def _words_in(quote: str, flat: str) -> bool:
    """`quote` is in `flat` as whole words ("no" is not in "nothing"), where its script has word edges."""
    head = r"(?<!\w)" if re.match(r"\w", quote) and not _NO_SPACE.match(quote) else ""
    tail = r"(?!\w)" if re.search(r"\w\Z", quote) and not _NO_SPACE.match(quote[-1]) else ""
    return re.search(head + re.escape(quote) + tail, flat) is not None


def specifics(text: str) -> list:
    """[(rule, token)]: the numbers (in digits or words; a lone "one", "first" or "second" is idiom, a list's "1."
    no number), names and quoted words of a text, each once."""
    said = norm(text)
    kilo = [m.span() for m in _KILO.finditer(said)]                 # 2k as written: 2000 or 2 km; 2m
    days = [(a, b) for a, b, _, _ in _days(said)]                   # 5 March, the 5th: checked as a date
    days += [m.span() for m in _ORDINAL.finditer(said) if not any(x <= m.start() < y for x, y in days)]
    spans = [m.span() for m in _MERIDIEM.finditer(said)] + kilo + days    # 2 of 2pm: checked as the time
    listed = [m.span() for m in _LISTED.finditer(said)]                     # no number at all
    words = [("numbers", n) for a, _, n in _numbered(said) if not any(x <= a < y for x, y in spans + listed)]
    words += [("numbers", said[a:b]) for a, b in days]
    words += [("numbers", f"{m.group(1)} km" if _race(said, m) else m.group(0)) for m in _KILO.finditer(said)]
    words += [("numbers", w) for w, v in spelled(text) if w.casefold() not in _IDIOM]
    words += [("numbers", f"{m.group(1)} {m.group(2).lower()}m") for m in _MERIDIEM.finditer(said)]
    words += [("numbers", "".join(m.group(1).split())) for m in _UNIT.finditer(said)]
    words += [("numbers", m.group(0)) for m in _WORD.finditer(said) if _IDENT.fullmatch(m.group(0))
              and not _UNIT.search(m.group(0)) and not any(x <= m.start() < y for x, y in kilo)]
    words += [("numbers", m.group(1).casefold()) for m in _VAGUE_WORD.finditer(said)]
    words += [("numbers", said[a:b]) for a, b, _, _ in _measured(text)]
    return list(dict.fromkeys(words + [("names", Person(w) if w in persons(said) else w) for w in names(text)]
                              + [("quotes", q) for q in quoted(text)]))


def missing_specifics(text: str, sources: Iterable[str]) -> list:
    """[(rule, token)] for each specific of `text` that no source holds."""
    known = known_of(tuple(sources))
    return [(r, t) for r, t in specifics(text) if not known.has(r, t)]


def word_share(text: str, sources: Iterable[str]) -> float:
    words = content_words(text)
    if not words:
        return 1.0
    pool = set().union(*(content_words(s) for s in sources)) if sources else set()
    return sum(1 for w in words if _found(w, pool)) / len(words)
