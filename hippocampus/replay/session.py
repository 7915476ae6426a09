"""The replay's HTTP session: cancellable, and it follows no redirect. A candidate that answers 3xx is a failed
call saying so (a redirect could lead anywhere, SerenMemory included), and nothing is sent on."""
from __future__ import annotations

import requests

from hippocampus.model.cancellable import CancellableSession


class Redirected(requests.RequestException):
    """The candidate answered a redirect, which a replay never follows (its message is the plain sentence)."""
    plain = True


class ReplaySession(CancellableSession):
    def request(self, method, url, *args, **kwargs):
        kwargs["allow_redirects"] = False
        resp = super().request(method, url, *args, **kwargs)
        if 300 <= resp.status_code < 400:
            resp.close()
            raise Redirected(f"the candidate answered HTTP {resp.status_code} (a redirect); replay follows no "
                             "redirects, so nothing was sent on")
        return resp
