"""GET /viewer: the window, on the shared Seren shell (seren_meninges.viewer).

The page is rendered once, at app build time, from the fragment files in
./viewer/ (head.html, header_aside.html, tabs.html, body.html, styles.css,
scripts.js). It is public: the page itself holds nothing, and its scripts ask
for the bearer (the shell's token modal) when a route answers 401.
No CDN, no build step: everything it needs is in the page.
"""
from __future__ import annotations

from pathlib import Path

import falcon
from seren_meninges.viewer import render_from_dir

from hippocampus import __version__

VIEWER_DIR = Path(__file__).resolve().parent / "viewer"
TITLE = "SerenHippocampus"
BRAND = "Seren<b>Hippocampus</b> · the sleep cycle"
ACCENT = "#c9a0dc"   # wisteria


def render_page() -> str:
    return render_from_dir(VIEWER_DIR, title=TITLE, brand=BRAND,
                           subtitle=f"v{__version__} · drafts long-term memory for review",
                           accent=ACCENT)


class Viewer:
    def __init__(self, runtime=None):
        self.rt = runtime
        self.html = render_page().encode("utf-8")

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "text/html; charset=utf-8"
        resp.cache_control = ["no-cache"]
        resp.data = self.html


def add_viewer(app: falcon.App, runtime) -> Viewer:
    viewer = Viewer(runtime)
    app.add_route("/viewer", viewer)
    return viewer
