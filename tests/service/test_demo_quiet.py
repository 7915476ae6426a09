"""The demo's narration is all a person reads (issue 41, item 5): SerenMemory's start-up prints ("[seren-memory]
MCP extras not installed ..."), its request log's "WARNING ... 404" and other programs' warnings stay off the
console, and the narration keeps every step."""
from __future__ import annotations


def test_the_demo_prints_its_narration_and_no_other_programs_noise(scripted_demo):
    res = scripted_demo
    assert res.returncode == 0, res.stdout + res.stderr
    lines = (res.stdout + res.stderr).splitlines()
    noise = [ln for ln in lines if "[seren-memory]" in ln or "WARNING" in ln or "Warning:" in ln]
    assert noise == [], noise
    assert res.stderr == "", res.stderr
    said = res.stdout
    for step in ("starting a throwaway SerenMemory", "SerenMemory on http://127.0.0.1:", "scripted small model on",
                 "draft_submitted", "deny", "tend_resubmitted", "chain_closed", "landed:", "quality (GET /quality",
                 "the whole cycle ran: sleep, draft, review, redraft, review, landing"):
        assert step in said, step
    narrated = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert all(ln.startswith("[") and "s] " in ln[:12] or ln.startswith("viewer: ") for ln in narrated), narrated
