"""One replay at a time, on its own thread, never on a request thread (a few slow replays, each waiting on a
model up to candidates.TIMEOUT_CAP, would take every request thread and leave /health unanswered).

One asked for while another runs is refused at once (ReplayBusy: HTTP 409, a plain MCP answer), never queued.
The newest runs are kept in memory, until the service stops, so a caller that stopped waiting can read the
result later by the run's id.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Optional

from hippocampus import transport_words

log = logging.getLogger("hippocampus.replay")
KEEP = 5                            # finished runs kept for reading


def _stamp(ts: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(ts))


@dataclass
class Run:
    id: str
    draft_id: str
    candidate: str
    calls: int
    timeout_seconds: float
    started_at: float = field(default_factory=time.time)
    finished_at: Optional[float] = None
    result: Optional[dict] = None
    error: Optional[str] = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def where(self) -> str:
        return f"/replay?run={self.id}"

    def view(self) -> dict:
        """The run in brief (GET /replay's list): never its result."""
        return {"run": self.id, "draft_id": self.draft_id, "candidate": self.candidate, "calls": self.calls,
                "running": not self.done.is_set(), "started_at": self.started_at, "finished_at": self.finished_at,
                "failed": self.error is not None, "result": self.where}

    def running_words(self) -> str:
        return (f"the replay of draft {self.draft_id} on {self.candidate} is still running (started "
                f"{_stamp(self.started_at)}, {self.calls} call(s), all within {self.timeout_seconds:g} s)")


class ReplayBusy(Exception):
    def __init__(self, run: Run):
        self.run = run
        super().__init__(f"a replay is already running (draft {run.draft_id} on {run.candidate} since "
                         f"{_stamp(run.started_at)}, run {run.id}); one runs at a time, so nothing was started: "
                         "ask again once it is done")


class ReplayWorker:
    def __init__(self, keep: int = KEEP) -> None:
        self._lock = threading.Lock()
        self._current: Optional[Run] = None
        self._runs: "OrderedDict[str, Run]" = OrderedDict()
        self._keep = keep
        self._ids = itertools.count(1)

    def start(self, draft_id: str, candidate: str, calls: int, timeout_seconds: float,
              work: Callable[[], dict]) -> Run:
        """Run `work` on a thread of its own now; ReplayBusy at once if a replay is running."""
        with self._lock:
            if self._current is not None and not self._current.done.is_set():
                raise ReplayBusy(self._current)
            run = Run(id=f"{int(time.time())}-{next(self._ids)}", draft_id=draft_id, candidate=candidate,
                      calls=calls, timeout_seconds=timeout_seconds)
            self._current = run
            self._runs[run.id] = run
            while len(self._runs) > self._keep:
                self._runs.popitem(last=False)
        threading.Thread(target=self._run, args=(run, work), name="replay", daemon=True).start()
        return run

    def _run(self, run: Run, work: Callable[[], dict]) -> None:
        try:
            run.result = work()
        except Exception as exc:  # noqa: BLE001 - the caller reads the failure; the thread never dies loud
            log.exception("the replay of draft %s failed", run.draft_id)
            run.error = f"the replay failed inside the hippocampus: {transport_words.in_words(exc)}"
            if "the service log has the details" not in run.error:
                run.error += "; the service log has the details"
        finally:
            run.finished_at = time.time()
            run.done.set()
            log.info("the replay of draft %s on %s ended after %.1f s", run.draft_id, run.candidate,
                     run.finished_at - run.started_at)

    def get(self, run_id: str) -> Optional[Run]:
        with self._lock:
            return self._runs.get(run_id)

    def kept(self) -> list:
        """The runs kept, newest first."""
        with self._lock:
            return list(reversed(self._runs.values()))
