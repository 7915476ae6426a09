"""The process's log on stderr: plain lines, or one JSON object a line (--log-format json); under systemd's
journal (its $JOURNAL_STREAM is this stderr) each line carries the syslog priority prefix ("<4>" for a
warning), so `journalctl -p warning` finds the warnings.
"""
from __future__ import annotations

import json
import logging
import os
import sys

FORMATS = ("text", "json")
TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JOURNAL_TEXT = "%(levelname)s %(name)s: %(message)s"        # the journal stamps the time itself
PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}


def priority(levelno: int) -> int:
    """The syslog priority of a level (sd-daemon(3)'s prefixes): the nearest standard level at or below it."""
    return next((PRIORITY[level] for level in sorted(PRIORITY, reverse=True) if levelno >= level), 7)


def under_journal(stream=None) -> bool:
    """True when $JOURNAL_STREAM names this stream (device:inode), as systemd sets it for a unit's stderr."""
    want = os.environ.get("JOURNAL_STREAM", "")
    if not want:
        return False
    try:
        st = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return want == f"{st.st_dev}:{st.st_ino}"


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (epoch seconds), level, logger, thread, message, and the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"time": round(record.created, 3), "level": record.levelname, "logger": record.name,
                "thread": record.threadName, "message": record.getMessage()}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class JournalFormatter(logging.Formatter):
    """Each line of a record prefixed with its priority (a traceback's lines keep the record's)."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{priority(record.levelno)}>"
        return "\n".join(prefix + line for line in self.inner.format(record).splitlines() or [""])


def formatter(fmt: str = "text", journal: bool = False) -> logging.Formatter:
    inner = JsonFormatter() if fmt == "json" else logging.Formatter(JOURNAL_TEXT if journal else TEXT)
    return JournalFormatter(inner) if journal else inner


def configure(level: int, fmt: str = "text") -> None:
    """The root logger's one stderr handler, in the format asked for."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt, journal=under_journal(sys.stderr)))
    logging.basicConfig(level=level, handlers=[handler])


def console(line: str, level: int = logging.INFO) -> None:
    """A start-up line for the person at the console: printed as it is (under the journal, with its priority), or,
    with --log-format json, one more JSON line of the log (so that every line on stderr parses)."""
    if any(isinstance(getattr(h.formatter, "inner", h.formatter), JsonFormatter) for h in logging.getLogger().handlers):
        logging.getLogger("hippocampus").log(level, "%s", line)
    elif under_journal(sys.stderr):     # each line at its priority, so `journalctl -p err` shows a refusal
        print("\n".join(f"<{priority(level)}>{part}" for part in line.splitlines() or [""]), file=sys.stderr,
              flush=True)
    else:
        print(line, file=sys.stderr, flush=True)
