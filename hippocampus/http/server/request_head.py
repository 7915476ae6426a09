"""What is decided from a request head alone, before a byte of its body is read (waitress reads the whole
body before the app runs, so the app's own checks come too late for a body that trickles).

`HeadParser` is waitress's request parser, and also:
- refuses a request with both Content-Length and Transfer-Encoding (400, RFC 9112 6.1: waitress took the
  chunked end, and the bytes after it ran as a second request a proxy would count as this one's body);
- answers 401 from its head a request with a body, to a route that needs the bearer, without the bearer
  (auth.needs_bearer and auth.bearer_matches, the app's own rule): its body is never read;
- drops whatever arrived after a refusal instead of parsing it as a next request;
- notes when the head was complete (`head_done_at`), from which the body's deadline runs.
"""
from __future__ import annotations

import time

from waitress.parser import HTTPRequestParser, ParsingError
from waitress.utilities import Error

from hippocampus.http.auth import bearer_matches, needs_bearer

BOTH_FRAMINGS = ("the request says both Content-Length and Transfer-Encoding, which disagree about where its "
                 "body ends; send one of them")


class FamilyError(Error):
    """A refusal whose detail is said as is, in the family shape, with any headers it needs."""

    def __init__(self, detail: str, headers=()):
        super().__init__(detail)
        self.headers = list(headers)


class Unauthorized(FamilyError):
    code, reason = 401, "Unauthorized"

    def __init__(self) -> None:      # the app's own answer (BearerAuth), word for word
        super().__init__("unauthorized", [("WWW-Authenticate", "Bearer")])


class RequestTimeout(FamilyError):
    code, reason = 408, "Request Timeout"


class TooManyFromOneAddress(FamilyError):
    code, reason = 503, "Service Unavailable"


class HeadParser(HTTPRequestParser):
    bearer = b""                 # the token; empty: no bearer configured
    head_done_at = None          # time.monotonic() when the head was complete
    refused_unauthorized = False

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        # waitress has popped Transfer-Encoding by now if it took it (HTTP/1.1); on HTTP/1.0 it is still here
        if "CONTENT_LENGTH" in self.headers and (self.chunked or "TRANSFER_ENCODING" in self.headers):
            raise ParsingError(BOTH_FRAMINGS)

    def received(self, data: bytes) -> int:
        had_head = self.headers_finished
        consumed = super().received(data)
        if self.headers_finished and not had_head:
            self.head_done_at = time.monotonic()
            if (self.bearer and not self.completed and self.error is None
                    and needs_bearer(self.command, self.path)
                    and not bearer_matches(self.headers.get("AUTHORIZATION", ""), self.bearer)):
                self.error, self.completed = Unauthorized(), True
                self.refused_unauthorized = True
        if self.error is not None:
            return len(data)     # nothing after a refusal is a request: the connection closes after it
        return consumed
