"""The quality actor: the watch that keeps the draft-quality report fresh on the board."""
from __future__ import annotations

from hippocampus.replay.service import QualityWatch

from actors.watch import WatchActor


class QualityActor(WatchActor):
    """The quality report, read when replay.service.QualityWatch says (its refresh also scrubs purged files)."""
    name = "quality"
    first = {"ready": False, "groups": [], "error": None}

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.watch = QualityWatch(runtime.ctx)

    def due(self) -> bool:
        return self.watch.due()

    def read(self) -> dict:
        return self.watch.refresh()
