"""waitress's "Task queue depth is N", said for every request of a burst, becomes one line a minute."""
from __future__ import annotations

import logging

from hippocampus.http.auth import QueueDepthLines


def depth_record(n) -> logging.LogRecord:
    return logging.LogRecord("waitress.queue", logging.WARNING, "task.py", 114, "Task queue depth is %d", (n,), None)


def test_a_burst_is_one_line_saying_how_many_waited_and_how_deep(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr("hippocampus.http.auth.time.monotonic", lambda: now[0])
    f = QueueDepthLines()
    kept = [r for r in (depth_record(n) for n in (1, 2, 7, 3, 1)) if f.filter(r)]
    assert len(kept) == 1 and kept[0].getMessage().startswith("every request thread was busy: 1 requests")
    now[0] += 61
    late = depth_record(2)
    assert f.filter(late)
    assert "5 requests waited" in late.getMessage() and "the deepest queue 7" in late.getMessage()


def test_other_waitress_lines_pass_untouched():
    other = logging.LogRecord("waitress.queue", logging.WARNING, "x", 1, "something else %s", ("x",), None)
    assert QueueDepthLines().filter(other) and other.getMessage() == "something else x"
