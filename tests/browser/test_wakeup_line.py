"""The viewer's "Wake-up: ..." line (issue 23) in Debian's headless Chromium: the check /status carries,
and the last ripple per event with its exit code."""
from __future__ import annotations

import getpass
import os
import sys

import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM) or os.name == "nt":
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT = 20_000


def test_the_viewer_says_whether_a_wake_up_would_work_and_how_the_last_one_ended(make_config, start_service,
                                                                                 tmp_path):
    script = tmp_path / "wake.py"
    script.write_text("import sys\nprint('woken')\nsys.exit(6)\n", encoding="utf-8")
    cfg = make_config(ripple={"type": "script", "command": [sys.executable, str(script), "{message}"],
                              "cwd": str(tmp_path), "run_as": getpass.getuser(), "events": ["draft_submitted"]})
    svc = start_service(cfg)
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    try:
        page = browser.new_page()
        page.set_default_timeout(WAIT)
        errors: list = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(svc.url + "/viewer")
        line = page.locator("#wakeupLine")
        expect(line).to_contain_text("Wake-up: ok: ", timeout=WAIT)
        svc.runtime.ctx.emit("draft_submitted", draft_id="d-view", operations=1)
        expect(line).to_contain_text("last: draft_submitted", timeout=WAIT)
        expect(line).to_contain_text("exited 6", timeout=WAIT)
        cfg.ripple.cwd = str(tmp_path / "gone")       # the folder goes; the check after the next ripple says so
        svc.runtime.ctx.emit("draft_submitted", draft_id="d-view-2", operations=1)
        expect(line).to_contain_text("Wake-up: would fail (see above)", timeout=WAIT)   # the error said once:
        expect(page.locator("#explainText")).to_contain_text("would fail: cwd:", timeout=WAIT)   # in the headline
        expect(page.locator("#explainLabel")).to_have_text("Something is wrong", timeout=WAIT)
        assert errors == []
    finally:
        browser.close()
        pw.stop()
