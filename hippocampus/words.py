"""What a person or the main model reads, written once: the sentences said in more than one place, the one clock,
the one reading of yes and no, and a log line's escapes. It imports nothing of the hippocampus, so every layer may
use it (the HTTP and the MCP front-ends, the config, the cycle, the narrator)."""
from __future__ import annotations

import contextlib
import contextvars
import re
import time
from typing import Any, Iterator, Optional

# ---------------------------------------------------------------- yes and no

YES, NO = frozenset({"1", "true", "yes", "on", "t", "y"}), frozenset({"0", "false", "no", "off", "f", "n"})
BOOLEAN = frozenset({"true", "false"})      # where a schema says boolean (HTTP's query flags): these words only


def yes_no(value: Any, words: frozenset = YES | NO) -> Optional[bool]:
    """True or False for a yes or a no (a bool, 0 or 1, or one of `words` in any case, spaces around it
    ignored); None for anything else: the caller refuses it in its own words."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower() if isinstance(value, (int, str)) else None
    return word in YES if word in words else None


def whole(value: Any) -> Optional[int]:
    """A whole number as given: an int (not a bool), a float with no fraction, or text of digits (a sign and
    spaces around it allowed); None for anything else (the caller refuses it in its own words)."""
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        with contextlib.suppress(ValueError):       # past Python's 4,300 digits
            return int(value.strip())
    elif not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and value.is_integer()):
        return int(value)
    return None


# ---------------------------------------------------------------- a log line's escapes

_ESCAPES = {n: f"\\x{n:02x}" for n in (*range(0x20), *range(0x7f, 0xa0))}      # C0, DEL, C1
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\",
                 0x2028: "\\u2028", 0x2029: "\\u2029"})


def escape_controls(text: str) -> str:
    """A caller's text safe for a log line: control characters, U+2028/9 and the backslash become escapes (so an
    escape in the log is never the caller's own backslash); any other letter, in any script, is kept."""
    return text.translate(_ESCAPES)


_CONTROLS = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f"     # control_at's, as a regex class
PLAIN = f"^[^{_CONTROLS}]*$"                                # for a JSON schema: text with none of them
ONE_LINE = f"^[^{_CONTROLS}\\t\\n\\r\\u2028\\u2029]*$"          # and on one line (a name that is logged)
PLAIN_SAID = f"^[^{_CONTROLS}]*[^\\s{_CONTROLS}][^{_CONTROLS}]*$"     # and not blank


def control_at(text: str, allowed: str = "\t\n\r") -> Optional[str]:
    """Where `text` holds its first control character (C0, DEL, C1; not those `allowed`): "'\\x1b' at line 2,
    column 9", or None."""
    for i, ch in enumerate(text):
        if (ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0) and ch not in allowed:
            line, start = text.count("\n", 0, i) + 1, text.rfind("\n", 0, i) + 1
            return f"'{escape_controls(ch)}' at line {line}, column {i - start + 1}"
    return None


# ---------------------------------------------------------------- the clock

_TIMES: contextvars.ContextVar = contextvars.ContextVar("hippocampus_times_said", default=None)


@contextlib.contextmanager
def times_said() -> Iterator[dict]:
    """Collects each time hhmm writes, as {"HH:MM": epoch seconds}: the viewer shows each in the person's
    own clock (12- or 24-hour, their locale) from the number, so both tabs read alike."""
    times: dict = {}
    token = _TIMES.set(times)
    try:
        yield times
    finally:
        _TIMES.reset(token)


def cap(text: str) -> str:
    """The first letter up, the rest as written (a setting's name or "Memory" keeps its case)."""
    return text[:1].upper() + text[1:] if text else text


def n(count: Any, one: str, many: Optional[str] = None) -> str:
    """A count and its noun: "1 pile", "3 piles", "2 operations" (count: a number, or a list's length)."""
    c = count if isinstance(count, int) else len(count or [])
    return f"{c} {one if c == 1 else (many or one + 's')}"


def pct(rate: Optional[float]) -> str:
    """A share as a person reads it: "42%", or "n/a" for none."""
    return "n/a" if rate is None else f"{round(rate * 100)}%"


def hhmm(ts: Optional[float], day: bool = False) -> str:
    """The one clock: "HH:MM" local ("YYYY-MM-DD HH:MM" with the day); "?" for no time, or one no clock can show
    (a note in Memory said 1e300)."""
    try:
        text = time.strftime("%Y-%m-%d %H:%M" if day else "%H:%M", time.localtime(float(ts))) if ts else "?"
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"
    said = _TIMES.get()
    if said is not None and text != "?":
        said[text[-5:]] = float(ts)
    return text


# ---------------------------------------------------------------- sentences said in more than one place

def busy(what: str, since: Optional[float]) -> str:
    """A cycle that is running, as HTTP's 409, the MCP answer, the narrator and the note beside the buttons say
    it."""
    return f"a {what or 'cycle'} is running" + (f" since {hhmm(since)}" if since else "")


# how the main model answers a request for a brief: the note in Memory, MCP's sleep_now and its answer
FAILED_WAIT_MAX_SECONDS = 4 * 3600.0     # the longest wait after failed sleeps in a row (sleep.wait_after)


def failed_wait_words(failures: Any, until_ts: float) -> str:
    """How long a failed sleep's brief waits before a check tries it again, and why (log, event, /status)."""
    times = "the first failure" if not isinstance(failures, int) or failures <= 1 else f"{failures} failures in a row"
    return (f"the next try waits until {hhmm(until_ts)} ({times}; each failure in a row doubles the wait, "
            f"up to {FAILED_WAIT_MAX_SECONDS / 3600:g} h), and Sleep now tries at once")


WRITE_BRIEF = "write it with submit_brief on Memory, then nudge the hippocampus"

# a sleep by hand that found no brief: the answer's message, the person's result line and MCP's message
ASKED_FOR_BRIEF = ("no brief was waiting, so nothing was drafted blind: a note in Memory asks the main model for one, "
                   "and the sleep runs once it arrives")


def another_copy(other: dict, default: str = "works on this Memory") -> str:
    """Who the other copy of the service on this Memory is (pid, host, state folder when a note names it), and what
    it does."""
    who = "another copy of seren-hippocampus"
    if other.get("pid") is not None:
        who += f" (pid {other.get('pid')} on {other.get('host')}, state folder {other.get('folder')})"
    return f"{who} {other.get('what') or default}"
