"""Debian's headless Chromium under Playwright, for every test here: one browser for the folder (one per command
line), and a fresh context (its own localStorage) per page. Without Chromium or Playwright the tests here skip."""
from __future__ import annotations

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT = 20_000   # ms: every expect polls up to this deadline


def sync_api():
    """Playwright's sync API, or a skip saying what is missing."""
    if not os.path.exists(CHROMIUM) or os.name == "nt":
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
    api = pytest.importorskip("playwright.sync_api")
    api.expect.set_options(timeout=WAIT)
    return api


@pytest.fixture(scope="package")
def _chromiums():
    """The Chromiums of this folder's tests: one per command line (ARGS plus a module's EXTRA_ARGS), launched when
    first asked for and closed after the folder's last test. Launching one for each module cost 1-2 s a module;
    no test depends on a fresh browser, as every page has a context (and localStorage) of its own."""
    api = sync_api()
    pw, launched = None, {}

    def get(extra: list):
        nonlocal pw
        if pw is None:
            pw = api.sync_playwright().start()
        key = tuple(extra)
        if key not in launched or not launched[key].is_connected():
            launched[key] = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS + list(extra))
        return launched[key]
    yield get
    for b in launched.values():
        b.close()
    if pw is not None:
        pw.stop()


@pytest.fixture(scope="module")
def browser(request, _chromiums):
    """The Chromium for the module; a module's EXTRA_ARGS go on its command line."""
    return _chromiums(list(getattr(request.module, "EXTRA_ARGS", [])))


class Console:
    """The page's errors: console.error lines and uncaught exceptions."""

    def __init__(self, page):
        self.errors: list = []
        page.on("console", lambda m: self.errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))


@pytest.fixture
def open_page(browser):
    """open_page(url) -> (page, console) on url's /viewer, in a context of its own; closed at teardown."""
    contexts = []

    def open_(url: str, width: int = 1280, height: int = 900, scale: float = 1, locale: str = "en-US"):
        ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=scale,
                                  locale=locale)
        contexts.append(ctx)
        page = ctx.new_page()
        page.set_default_timeout(WAIT)
        console = Console(page)
        page.goto(url + "/viewer")
        return page, console
    yield open_
    for ctx in contexts:
        ctx.close()
