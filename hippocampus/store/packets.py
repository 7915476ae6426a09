"""The replay packets on disk: `replays/<draft_id>.json` beside the state file, 0600 (a packet holds the person's
fragments); the newest KEEP are kept.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
from pathlib import Path
from typing import Iterator, Optional

from hippocampus.store import private

log = logging.getLogger("hippocampus.replay")

FOLDER = "replays"
KEEP = 300
OWED = "forget-owed.json"          # purged ids whose scrub could not finish yet (Memory did not answer)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


class PacketStore:
    def __init__(self, folder: Path, keep: int = KEEP):
        self.folder = Path(folder)
        self.keep = keep

    def path(self, draft_id: str) -> Optional[Path]:
        """The packet's file, or None for an id that cannot be a file name here."""
        if not isinstance(draft_id, str) or not _ID.match(draft_id):
            return None
        return self.folder / f"{draft_id}.json"

    def load(self, draft_id: str) -> Optional[dict]:
        path = self.path(draft_id)
        return self.read_path(path) if path is not None else None

    def paths(self) -> list:
        """Every packet file, newest first."""
        try:
            entries = [p for p in self.folder.iterdir() if p.suffix == ".json" and p.name != OWED]
        except OSError:
            return []
        stamped = []
        for p in entries:
            with contextlib.suppress(OSError):     # gone since the listing
                stamped.append((p.stat().st_mtime, p.name, p))
        return [p for _, _, p in sorted(stamped, reverse=True)]

    def packets(self) -> Iterator[tuple]:
        for p in self.paths():
            packet = self.read_path(p)
            if packet is not None:
                yield p, packet

    def newest(self, n: int) -> list:
        return [packet for _, packet in itertools.islice(self.packets(), max(0, n))]

    @staticmethod
    def read_path(path: Path) -> Optional[dict]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("calls"), list) else None

    def save(self, packet: dict) -> bool:
        path = self.path(packet.get("draft_id"))
        if path is None:
            log.warning("no replay packet for a draft id that is not a file name: %r", packet.get("draft_id"))
            return False
        try:
            private.write_atomic(path, packet)
        except OSError as exc:
            log.warning("the replay packet for draft %s could not be written (%s)", packet.get("draft_id"), exc)
            return False
        for p in self.paths()[self.keep:]:
            with contextlib.suppress(OSError):
                p.unlink()
        return True

    def rewrite(self, path: Path, packet: dict) -> bool:
        """Write a changed packet in place, keeping its modification time: forgetting never moves it up the list."""
        try:
            st = path.stat()
            private.write_atomic(path, packet)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            return True
        except OSError as exc:
            log.error("the replay packet %s could not be rewritten (%s)", path.name, exc)
            return False

    def owed(self) -> list:
        try:
            data = json.loads((self.folder / OWED).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):       # none owed, or a file that says nothing
            return []
        return [str(i) for i in data] if isinstance(data, list) else []

    def set_owed(self, ids: list) -> None:
        path = self.folder / OWED
        try:
            if ids:
                private.write_atomic(path, sorted(set(ids)))
            elif path.exists():
                path.unlink()
        except OSError as exc:
            log.error("could not record the purges still to scrub from the replay packets (%s)", exc)
