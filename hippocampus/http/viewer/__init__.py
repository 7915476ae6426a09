"""GET /viewer: the window, on the shared Seren shell (seren_meninges.viewer), rendered once from the fragment
files beside this module. Its Content-Security-Policy runs no script but the page's own blocks (by SHA-256):
the markup's inline handlers are lifted into that script, so it needs neither 'unsafe-inline' nor 'unsafe-hashes'.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path

import falcon
from seren_meninges.viewer import render_from_dir

from hippocampus import __version__

_SCRIPT = re.compile(r"(<script>)(.*?)(</script>)", re.S | re.I)
_TAG = re.compile(r"""<[a-zA-Z](?:[^>"']|"[^"]*"|'[^']*')*>""")
_HANDLER = re.compile(r"""\son([a-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
# the shell's token button is "🔑 Token", a box without an emoji font: drawn as inline SVG in the text's colour
KEY_SVG = ('<svg class="icon-svg" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" fill="none" '
           'stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">'
           '<circle cx="7.5" cy="15.5" r="4.5"/><path d="M10.7 12.3 20 3m-4 4 3 3m-5-1 2 2"/></svg>')
EMOJI_KEY = "\U0001F511"


def lift_handlers(page: str) -> str:
    """Every inline handler in the markup becomes a data-hx-on attribute, bound by the page's last script as
    the attribute was (`this` the element, `event` the event, in the same order)."""
    if not _SCRIPT.search(page):
        return page
    handlers: list = []

    def tag(m: re.Match) -> str:
        mine: list = []

        def one(h: re.Match) -> str:
            handlers.append((h.group(1).lower(), html.unescape(h.group(2) or h.group(3) or "")))
            mine.append(str(len(handlers) - 1))
            return ""
        out = _HANDLER.sub(one, m.group(0))
        return out if not mine else out[:-1].rstrip("/ ") + f' data-hx-on="{" ".join(mine)}"' + \
            (" />" if out.endswith("/>") else ">")
    # only the markup between the script blocks is touched (split gives each block as its three groups)
    out = "".join(piece if i % 4 else _TAG.sub(tag, piece) for i, piece in enumerate(_SCRIPT.split(page)))
    if not handlers:
        return out
    binder = ["", "// the markup's inline handlers, bound here (the CSP runs no inline handler)",
              "(() => { const on = {"]
    binder += [f"  {i}: [{json.dumps(event)}, function(event){{ {code}\n  }}]," for i, (event, code) in
               enumerate(handlers)]
    binder += ["}; document.querySelectorAll('[data-hx-on]').forEach(el => el.dataset.hxOn.split(' ').forEach(n => {",
               "  const h = on[n]; if (h) el.addEventListener(h[0], h[1]); })); })();", ""]
    # first in the last script block: bound in document order, before the page's own addEventListener
    # calls, as the attributes were (the markup it binds is all parsed by then)
    opening = out.rfind("<script>") + len("<script>")
    return out[:opening] + "\n".join(binder) + out[opening:]


class Viewer:
    def __init__(self):
        page = render_from_dir(Path(__file__).resolve().parent, title="SerenHippocampus",
                               brand="Seren<b>Hippocampus</b> · the sleep cycle",
                               subtitle=f"v{__version__} · drafts long-term memory for review",
                               accent="#c9a0dc")     # wisteria
        page = page.replace(f'onclick="openToken()">{EMOJI_KEY} Token</button>',
                            f'onclick="openToken()">{KEY_SVG}<span>Token</span></button>')
        page = lift_handlers(page.replace(EMOJI_KEY, "key"))     # the shell's CSS comments name it too
        self.html = page.encode("utf-8")
        scripts = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
                           + "'" for _, body, _ in _SCRIPT.findall(page)) or "'none'"
        self.csp = (f"default-src 'self'; script-src {scripts}; style-src 'self' 'unsafe-inline'; img-src 'self' "
                    "data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                    "frame-ancestors 'none'")

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/html; charset=utf-8"
        resp.cache_control = ["no-cache"]
        resp.set_headers({"Content-Security-Policy": self.csp, "X-Frame-Options": "DENY",
                          "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})
        resp.data = self.html

