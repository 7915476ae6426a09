"""The viewer's "Wake-up: ..." line (issue 23) in Debian's headless Chromium: the check /status carries,
and the last ripple per event with its exit code."""
from __future__ import annotations

import getpass
import sys


from tests.browser.conftest import WAIT, sync_api

expect = sync_api().expect


def test_the_viewer_says_whether_a_wake_up_would_work_and_how_the_last_one_ended(make_config, start_service,
                                                                                 tmp_path, open_page):
    script = tmp_path / "wake.py"
    script.write_text("import sys\nprint('woken')\nsys.exit(6)\n", encoding="utf-8")
    cfg = make_config(ripple={"type": "script", "command": [sys.executable, str(script), "{message}"],
                              "cwd": str(tmp_path), "run_as": getpass.getuser(), "events": ["draft_submitted"]})
    svc = start_service(cfg)
    page, console = open_page(svc.url)
    line = page.locator("#wakeupLine")
    expect(line).to_contain_text("Wake-up: ok: ", timeout=WAIT)
    svc.runtime.ctx.emit("draft_submitted", draft_id="d-view", operations=1)
    expect(line).to_contain_text("last: draft submitted", timeout=WAIT)     # the event in words
    expect(line).to_contain_text("exited 6", timeout=WAIT)
    cfg.ripple.cwd = str(tmp_path / "gone")       # the folder goes; the check after the next ripple says so
    svc.runtime.ctx.emit("draft_submitted", draft_id="d-view-2", operations=1)
    expect(line).to_contain_text("Wake-up: would fail (see above)", timeout=WAIT)   # the error said once:
    expect(page.locator("#explainText")).to_contain_text("would fail: cwd:", timeout=WAIT)   # in the headline
    expect(page.locator("#explainLabel")).to_have_text("Something is wrong", timeout=WAIT)
    assert [e for e in console.errors if e.startswith("pageerror")] == []
