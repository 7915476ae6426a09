"""One rule for every URL the service shows or logs: its user:password@ and its query values are hidden
(http://user:pw@host:7420/path?key=abc -> http://***@host:7420/path?key=***); the rest stays recognisable."""
from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

HIDDEN = "***"
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s?#@'\"<>]*@")
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+")
_QUERY_VALUE = re.compile(r"([?&][^=&\s?#'\"<>]+=)(?!\*\*\*)[^&\s#'\"<>)\]}]+")


def url(value: Any) -> Any:
    """A configured URL with its userinfo and query values hidden; a blank or non-string value as given."""
    if not isinstance(value, str) or not value.strip():
        return value
    try:
        parts = urlsplit(value.strip())
        host = parts.netloc
    except ValueError:
        return text(value)
    if "@" in host:
        host = HIDDEN + "@" + host.rsplit("@", 1)[1]
    query = "&".join(_hide_pair(p) for p in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, query, HIDDEN if parts.fragment else ""))


def _hide_pair(pair: str) -> str:
    if not pair:
        return pair
    name, eq, _ = pair.partition("=")
    return f"{name}={HIDDEN}" if eq else HIDDEN


def text(value: Any) -> Any:
    """Free text with every URL's userinfo and every query value in it hidden."""
    if not isinstance(value, str) or ("@" not in value and "=" not in value):
        return value
    value = _URL.sub(_url_in_text, value)
    return _QUERY_VALUE.sub(lambda m: m.group(1) + HIDDEN, _USERINFO.sub(lambda m: m.group(1) + HIDDEN + "@", value))


def _url_in_text(m: re.Match) -> str:
    found = m.group(0)
    core = found.rstrip(".,;:!)]}")
    return url(core) + found[len(core):]


def deep(value: Any) -> Any:
    """text() on every string in a JSON-like value (dicts, lists, tuples); a new value, the old untouched."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {k: deep(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [deep(v) for v in value]
    return value


class LogFilter(logging.Filter):
    """On a handler: every record's message goes out with its URLs' secrets hidden (a subclass: its own rewrite)."""
    rewrite = staticmethod(text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format is the logging module's to report
            return True
        hidden = self.rewrite(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True


def guard_logging(logger: logging.Logger = None) -> None:
    """Put the filter on every handler of the logger (the root by default), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, LogFilter) for f in handler.filters):
            handler.addFilter(LogFilter())
