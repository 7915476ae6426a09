"""The tick's one executor: one table runs every step the decision can return, reports keep the JSON the
state file and the answers have always carried, and nothing but the executor reads the tick's snapshot or
decides."""
from __future__ import annotations

import pathlib
import re

from hippocampus.cycle import decide as d
from hippocampus.cycle import executor
from hippocampus.cycle.reports import CheckReport, SleepRefused, SleepReport, TendReport
from hippocampus.cycle.snapshot import Snapshot
from tests.unit.test_tick_decision import NOW, ROWS, kinds, sleep_cfg

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_table_has_a_handler_for_every_step_kind_and_nothing_else():
    assert set(executor.HANDLERS) == d.CHAIN_STEPS | d.CHECK_STEPS
    assert not d.CHAIN_STEPS & d.CHECK_STEPS


def test_every_step_the_decision_table_returns_has_its_handler():
    seen = set()
    for _, drafts, briefs, state, asked, _ in ROWS:
        snap = Snapshot(at=NOW, drafts=tuple(drafts), briefs=tuple(briefs))
        seen |= set(kinds(d.decide(snap, state, sleep_cfg(), NOW, asked)))
    assert seen == set(executor.HANDLERS)


def test_nothing_but_the_executor_reads_the_tick_s_snapshot_or_decides():
    callers = [str(path.relative_to(ROOT))
               for path in [*(ROOT / "hippocampus").rglob("*.py"), *(ROOT / "actors").rglob("*.py")]
               if path.name != "executor.py"
               and re.search(r"(?<!def )\b(decide|read_for)\(", path.read_text())]
    assert callers == []


def test_reports_keep_the_json_keys_the_state_file_and_the_answers_carry():
    assert list(TendReport().to_dict()) == [
        "kind", "started_at", "redraft", "examined", "resubmitted", "ended", "closed", "deferred", "under_review",
        "withdrawn", "model_failures", "tidy", "error", "interrupted", "finished_at", "duration_seconds", "guard"]
    assert set(SleepReport().to_dict()) == {
        "kind", "started_at", "purged", "brief_id", "brief_pulled", "brief_answered", "clusters", "piles",
        "operations", "kinds", "model_calls", "cut_off", "draft_id", "held_back", "below_threshold", "tidy",
        "error", "catch_up", "quiet", "model_failures", "hints", "brief_unmatched", "interrupted", "other", "resumed",
        "retry_at", "failures", "next_try_at", "finished_at", "duration_seconds", "guard", "kept_back", "budget", "write", "tokens"}
    check = CheckReport(at=NOW, status="sleeping", sleep=SleepReport(draft_id="d1"))
    assert check.to_dict()["sleep"]["draft_id"] == "d1"
    assert list(check.kept()) == ["at", "status", "brief_id", "misses", "purged", "error", "retry_at", "other"]
    assert SleepRefused("chain_open", "busy", draft_id="d1").to_dict() == {
        "refused": True, "status": "chain_open", "draft_id": "d1", "operations": 0, "error": None, "message": "busy"}
    asked = SleepRefused("asked_for_brief", "asked", intent_id="n1").to_dict()
    assert asked["asked_for_brief"] is True and asked["intent_id"] == "n1" and "refused" not in asked


def test_a_report_says_whether_memory_changed():
    assert not TendReport(deferred=["c1"]).memory_changed
    assert TendReport(closed=["c1"]).memory_changed and TendReport(resubmitted=[{"draft_id": "d"}]).memory_changed
    assert SleepReport(draft_id="d1").memory_changed
    assert SleepReport(brief_id="b1").memory_changed                        # consumed or set aside
    assert not SleepReport(brief_id="b1", error="the model is down").memory_changed    # the brief is kept
    assert not CheckReport(status="not_bedtime").memory_changed
    assert CheckReport(status="sleeping", sleep=SleepReport(draft_id="d1")).memory_changed
    assert SleepRefused("asked_for_brief", "asked").memory_changed
    assert not SleepRefused("chain_open", "busy").memory_changed


def test_a_saved_sleep_report_is_read_back_without_the_keys_it_no_longer_has():
    saved = {**SleepReport(operations=3, brief_id="b1").to_dict(), "an_old_key": 1}
    back = SleepReport.from_dict(saved, resumed=True)
    assert (back.operations, back.brief_id, back.resumed) == (3, "b1", True)
