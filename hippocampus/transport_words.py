"""Transport failures in plain words: one table from what went wrong on the wire to the sentence a person reads.

The model's, Memory's, the webhook's and the ripple endpoint's clients all word failures here, so no exception's
class name reaches /status, the viewer, /history or an event. It imports nothing of the hippocampus.
"""
from __future__ import annotations

import http.client
import json
from typing import Any, Iterator, Optional

REFUSED = "refused"
NO_HOST = "no_host"
NO_CONNECT = "no_connect"
TIMED_OUT = "timed_out"
CLOSED = "closed"
HUNG_UP = "hung_up"
TLS = "tls"
NOT_JSON = "not_json"
ERROR = "error"
BROKEN = "broken"
TOO_LARGE = "too_large"

# What the other side did, as the predicate of "<who> at <url> ...".
SENTENCES = {
    REFUSED: "refused the connection: nothing is listening there",
    NO_HOST: "could not be found: its host name does not resolve",
    NO_CONNECT: "did not accept a connection within {seconds} s",
    TIMED_OUT: "did not answer within {seconds} s{setting}",
    CLOSED: "closed the connection without answering",
    HUNG_UP: "hung up in the middle of its answer, so the answer was cut short",
    TLS: "could not be reached securely: the TLS handshake failed",
    NOT_JSON: "answered something that is not JSON ({what})",
    ERROR: "answered an error (HTTP {status}){said}",
    BROKEN: "could not be reached ({why})",
    TOO_LARGE: "sent an answer that passed {cap}; the call was stopped there",
}
UNREACHABLE = (REFUSED, NO_HOST, NO_CONNECT)     # nothing was sent: the other side is not there
NO_REASON = "the connection could not be made or was lost"

_REFUSED_TEXT = ("Connection refused", "ConnectionRefused", "Errno 111", "Errno 61", "WinError 10061",
                 "actively refused")
_NO_HOST_TEXT = ("Name or service not known", "nodename nor servname", "getaddrinfo failed",
                 "Temporary failure in name resolution", "No address associated", "NameResolutionError")
_HUNG_UP_TEXT = ("IncompleteRead", "Connection broken", "InvalidChunkLength", "Response ended prematurely")
_CLOSED_TEXT = ("Remote end closed connection without response", "RemoteDisconnected")
_RESET_TEXT = ("Connection reset", "Connection aborted", "Broken pipe", "WinError 10054", "Errno 104", "Errno 32")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """exc and every exception it wraps (requests and urllib3 keep the cause in args or .reason)."""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo.extend(x for x in (*getattr(e, "args", ()), getattr(e, "reason", None), e.__cause__, e.__context__)
                    if isinstance(x, BaseException))


def cause(exc: BaseException) -> str:
    """Which row of the table a failed call belongs to."""
    chain = list(_chain(exc))
    names = {c.__name__ for e in chain for c in type(e).__mro__}
    text = " ".join(repr(e) for e in chain)
    if "AnswerTooLarge" in names:
        return TOO_LARGE
    if "DeadlinePassed" in names:           # the call's one deadline cut it: whatever the cut broke, it timed out
        return TIMED_OUT
    if "ConnectionRefusedError" in names or any(s in text for s in _REFUSED_TEXT):
        return REFUSED
    if names & {"NameResolutionError", "gaierror"} or any(s in text for s in _NO_HOST_TEXT):
        return NO_HOST
    # urllib3 2 makes every NewConnectionError a ConnectTimeoutError: only a connect that timed out is one here
    if "ConnectTimeout" in names or ("ConnectTimeoutError" in names and "timed out" in text):
        return NO_CONNECT
    if "NewConnectionError" in names:
        return BROKEN
    if names & {"ReadTimeout", "ReadTimeoutError", "TimeoutError", "timeout"} or "timed out" in text:
        return TIMED_OUT
    if names & {"SSLError", "SSLCertVerificationError"}:        # ssl's and requests' (the MRO's names)
        return TLS
    if "RemoteDisconnected" in names or any(s in text for s in _CLOSED_TEXT):
        return CLOSED
    if names & {"ChunkedEncodingError", "IncompleteRead", "ProtocolError", "ConnectionResetError",
                "BrokenPipeError", "ConnectionAbortedError", "InvalidChunkLength"} \
            or any(s in text for s in _HUNG_UP_TEXT + _RESET_TEXT):
        return HUNG_UP
    return BROKEN


def why(exc: BaseException) -> str:
    """The innermost plain reason a system call gave (its strerror), never a class name or a repr."""
    errors = (getattr(e, "strerror", None) for e in reversed(list(_chain(exc))))
    return next((err.strip() for err in errors if isinstance(err, str) and err.strip()), NO_REASON)


def predicate(row: str, *, seconds: Optional[float] = None, setting: str = "", status: Any = None,
              said: str = "", what: str = "", reason: str = "", cap: str = "") -> str:
    """What the other side did, in the table's words; `said` is quoted last (a caller that must not echo it
    cuts the text at ": '")."""
    return SENTENCES.get(row, SENTENCES[BROKEN]).format(
        seconds="?" if seconds is None else f"{float(seconds):g}", setting=f" ({setting})" if setting else "",
        status=status, said=f": {said[:200]!r}" if said else "", what=what or "an unreadable body",
        why=reason or NO_REASON, cap=cap or "the size allowed")


def failed_predicate(exc: BaseException, *, seconds: Optional[float] = None,
                     connect_seconds: Optional[float] = None, setting: str = "") -> tuple:
    """(row, what the other side did) for a call that raised `exc` before any answer could be read."""
    row = cause(exc)
    secs = connect_seconds if row == NO_CONNECT and connect_seconds is not None else seconds
    cap = next((e.cap_words for e in _chain(exc) if isinstance(getattr(e, "cap_words", None), str)), "")
    return row, predicate(row, seconds=secs, setting=setting if row == TIMED_OUT else "",
                          reason=why(exc) if row == BROKEN else "", cap=cap)


def failed(exc: BaseException, who: str, url: str, *, seconds: Optional[float] = None,
           connect_seconds: Optional[float] = None, setting: str = "") -> tuple:
    """(row, "<who> at <url> <what it did>") for a call that raised `exc` before any answer could be read."""
    row, did = failed_predicate(exc, seconds=seconds, connect_seconds=connect_seconds, setting=setting)
    return row, f"{who} at {url} {did}"


def body_kind(resp: Any, sample: bool = False) -> str:
    """What an answer that is not JSON looks like, in a few words (its first 40 characters only with `sample`)."""
    text = (getattr(resp, "text", "") or "").lstrip()
    kind = ((getattr(resp, "headers", None) or {}).get("Content-Type") or "").split(";")[0].strip()
    if text[:1] == "<":
        return "an HTML page" if "html" in (text[:200].lower() + kind) else "an XML document"
    if not text:
        return "an empty body"
    if sample:
        return f"a body that is not JSON ({kind or 'no content type'}: {text[:40]!r})"
    return f"a {kind} body" if kind else "a body with no content type"


def reason(resp: Any, limit: int = 400) -> str:
    """What an error answer said: its JSON error/detail/message, else its text; "" for none or a web page."""
    try:
        body = resp.json()
    except Exception:  # noqa: BLE001 - not JSON
        body = None
    if isinstance(body, dict):
        got = body.get("error") or body.get("detail") or body.get("message")
        if isinstance(got, dict):
            got = got.get("message") or got
        if got:
            return (got if isinstance(got, str) else json.dumps(got, default=str))[:limit]
    if body_kind(resp) in ("an HTML page", "an XML document"):
        return ""
    return (getattr(resp, "text", "") or "").strip()[:limit]


def not_json(who: str, url: str, resp: Any) -> str:
    return f"{who} at {url} {predicate(NOT_JSON, what=body_kind(resp))}"


def redirected(who: str, url: str, status: Any, location: str, setting: str = "") -> str:
    """A 3xx, never followed: it names where it pointed (and the setting that would point there)."""
    to = f" to {location}" if location else " with no Location"
    fix = f" (if that is the right address, set {setting} to it)" if setting and location else ""
    return f"{who} at {url} answered HTTP {status}, a redirect{to}; redirects are never followed{fix}"


def answered_error(who: str, url: str, status: Any, said: str = "") -> str:
    return f"{who} at {url} {predicate(ERROR, status=status, said=(said or '').strip())}"


# Builtin exceptions that only a fault in the code raises: their text alone says nothing to a person.
_FAULTS = (AttributeError, KeyError, IndexError, TypeError, NameError, AssertionError, ZeroDivisionError,
           LookupError, UnboundLocalError, RecursionError, NotImplementedError)


def in_words(exc: BaseException) -> str:
    """Any failure as a person reads it (our own errors' sentence, a transport row, or a fault), never a class name."""
    modules = {c.__module__.split(".")[0] for c in type(exc).__mro__}
    detail = str(exc).strip()
    if modules & {"requests", "urllib3"} or isinstance(exc, (http.client.HTTPException, ConnectionError)):
        req = getattr(exc, "request", None)
        return failed(exc, "a server", str(getattr(req, "url", "") or "its address").split("?")[0])[1]
    if not isinstance(exc, _FAULTS) and detail:
        return detail
    return ("an unexpected fault inside the hippocampus" + (f" ({detail[:200]})" if detail else "")
            + "; the service log has the details")
