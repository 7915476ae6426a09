"""The quality actor: the watch that keeps the quality report fresh and publishes it to the board.

It reads when hippocampus.replay.watch says so, so GET /quality, the viewer and sleep_status read the
board and never wait on Memory. The same refresh scrubs the files here of the purges Memory lists (a
purge made in Memory itself included).
"""
from __future__ import annotations

from hippocampus.replay.watch import QualityWatch

from actors.watch import WatchActor


class QualityActor(WatchActor):
    name = "quality"
    first = {"ready": False, "groups": [], "error": None}

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.watch = QualityWatch(runtime.ctx)

    def due(self) -> bool:
        return self.watch.due()

    def read(self) -> dict:
        return self.watch.refresh()
