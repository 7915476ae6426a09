"""What a tend, a check and a sleep did, as typed reports: `memory_changed` says whether the tick reads its
snapshot again; `to_dict()` is the JSON the state file, the answers and the viewer read."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional


class Report:
    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def pick(self, keys) -> dict:
        return {k: getattr(self, k) for k in keys}

    @classmethod
    def from_dict(cls, saved: dict, **over):
        """A report from its saved JSON (unknown keys dropped), with `over` on top."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in {**saved, **over}.items() if k in names})


@dataclass
class SleepReport(Report):
    kind: str = "sleep"
    started_at: Optional[float] = None
    purged: int = 0
    brief_id: Optional[str] = None
    brief_pulled: bool = False
    brief_answered: Optional[bool] = None
    clusters: int = 0
    piles: int = 0
    operations: int = 0
    kinds: dict = field(default_factory=dict)
    model_calls: int = 0
    cut_off: int = 0
    tokens: dict = field(default_factory=dict)      # the server's own counts over the night's calls (model.timings)
    draft_id: Optional[str] = None
    held_back: int = 0
    below_threshold: int = 0
    tidy: dict = field(default_factory=dict)
    error: Optional[str] = None
    catch_up: bool = False
    quiet: bool = False
    model_failures: list = field(default_factory=list)
    hints: Optional[dict] = None
    brief_unmatched: bool = False
    guard: dict = field(default_factory=dict)       # what the grounding guard dropped and repaired (guard.tally)
    kept_back: list = field(default_factory=list)   # promoted piles with nothing drafted: kept, not aged out
    budget: Optional[dict] = None       # the night's budget ran out: which limit, its setting, what was left
    write: Optional[dict] = None    # {mode, model, proposed, grounded}: how the model drafted (model.grounded)
    interrupted: Optional[str] = None
    other: Optional[dict] = None        # interrupted because another copy of the service took its brief over
    resumed: bool = False
    retry_at: Optional[float] = None    # a failed start of the model: when the lifecycle tries it again
    failures: int = 0                   # failed sleeps in a row on this brief, this one too (sleep.wait_after)
    next_try_at: Optional[float] = None     # a failed sleep: no check tries its brief again before this
    finished_at: Optional[float] = None
    duration_seconds: Optional[float] = None

    @property
    def ok(self) -> bool:
        return not self.error and not self.interrupted

    @property
    def memory_changed(self) -> bool:
        """A draft submitted, or (a sleep that drafted nothing) its brief consumed or set aside."""
        return bool(self.draft_id) or self.quiet or (self.ok and self.brief_id is not None)

    @property
    def briefs_changed(self) -> bool:
        """A sleep that posted its draft leaves its brief open (the chain's close consumes it); any other may not."""
        return not (self.draft_id and not self.brief_pulled)


@dataclass
class TendReport(Report):
    kind: str = "tend"
    started_at: Optional[float] = None
    redraft: Optional[bool] = True
    examined: int = 0
    resubmitted: list = field(default_factory=list)
    ended: list = field(default_factory=list)
    closed: list = field(default_factory=list)
    deferred: list = field(default_factory=list)
    under_review: list = field(default_factory=list)
    withdrawn: dict = field(default_factory=dict)
    model_failures: list = field(default_factory=list)
    tidy: dict = field(default_factory=dict)
    error: Optional[str] = None
    interrupted: Optional[str] = None
    finished_at: Optional[float] = None
    duration_seconds: Optional[float] = None
    guard: dict = field(default_factory=dict)       # what the grounding guard dropped and repaired in redrafts

    @property
    def memory_changed(self) -> bool:
        return bool(self.resubmitted or self.closed)

    @property
    def briefs_changed(self) -> bool:
        """A chain that closed consumed its brief; a redraft leaves the briefs as they were."""
        return bool(self.closed)


@dataclass
class CheckReport(Report):
    at: Optional[float] = None
    status: Optional[str] = None
    brief_id: Optional[str] = None
    misses: int = 0
    purged: int = 0
    error: Optional[str] = None
    retry_at: Optional[float] = None    # waiting_for_model: when the model's failed start is tried again
    other: Optional[dict] = None        # other_copy: the copy of the service sleeping on this Memory
    sleep: Optional[SleepReport] = None

    @property
    def memory_changed(self) -> bool:
        return self.sleep is not None and self.sleep.memory_changed

    @property
    def briefs_changed(self) -> bool:
        return self.sleep is None or self.sleep.briefs_changed

    def kept(self) -> dict:
        """What the state file keeps as last_check (the sleep is kept as last_sleep)."""
        return {k: v for k, v in self.to_dict().items() if k != "sleep"}


@dataclass
class SleepRefused(Report):
    """A sleep by hand that started nothing: a chain is open, a brief was asked for instead, or Memory failed."""
    status: str                       # chain_open | other_copy (it asked already) | asked_for_brief | error
    #                                   | memory_down (Memory did not answer before anything began)
    message: str
    error: Optional[str] = None
    draft_id: Optional[str] = None    # the open chain's latest draft
    intent_id: Optional[str] = None   # the brief request's note

    @property
    def memory_changed(self) -> bool:
        return self.status == "asked_for_brief"

    @property
    def briefs_changed(self) -> bool:
        return True

    def to_dict(self) -> dict:
        out = {"status": self.status, "draft_id": self.draft_id, "operations": 0, "error": self.error,
               "message": self.message}
        if self.status in ("chain_open", "other_copy"):
            out["refused"] = True
        elif self.status == "asked_for_brief":
            out.update(asked_for_brief=True, intent_id=self.intent_id)
        return out
