"""The quality actor: keeps the quality report fresh in the background and publishes it to the board.

It hears the supervisor's beat and refreshes when the watch says so (hippocampus.replay.watch), so GET
/quality, the viewer and sleep_status read the board and never wait on Memory. The same refresh scrubs the
files here of the purges Memory lists (a purge made in Memory itself included).
"""
from __future__ import annotations

from hippocampus.replay.watch import QualityWatch

from actors.base import Supervised


class QualityActor(Supervised):
    name = "quality"

    def __init__(self, supervisor, runtime) -> None:
        super().__init__(supervisor, runtime)
        self.watch = QualityWatch(runtime.ctx)
        self._published = None

    def on_Tick(self, msg) -> None:
        if self.watch.due():
            self.watch.refresh()

    def snapshot(self) -> dict:
        return self.watch.report or {"ready": False, "groups": [], "error": None}

    def publish(self) -> None:
        """Only a new report goes on the board (the beat comes every check_seconds)."""
        if self.watch.report is not None and self.watch.report is self._published:
            return
        self._published = self.watch.report
        super().publish()
