"""The replay packets on disk: `replays/<draft_id>.json` beside the state file, 0600 (a packet holds the person's
fragments); the newest KEEP are kept.

`replays/` is opened without following a link, and every file in it through that descriptor, never through a
link; only names this service writes (`<draft id>.json`, `forget-owed.json`) are listed, read or trimmed, so a
link or a stranger's file there is never touched.
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

log = logging.getLogger(__name__)

FOLDER = "replays"
KEEP = 300
OWED = "forget-owed.json"          # purged ids whose scrub could not finish yet (Memory did not answer)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_PACKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}\.json$")     # a name save() writes


class PacketStore:
    def __init__(self, folder: Path, keep: int = KEEP):
        self.folder = Path(folder)
        self.keep = keep
        self._said_link = False

    def path(self, draft_id: str) -> Optional[Path]:
        """The packet's file, or None for an id that cannot be a file name here."""
        return self.folder / f"{draft_id}.json" if isinstance(draft_id, str) and _ID.match(draft_id) else None

    def load(self, draft_id: str) -> Optional[dict]:
        path = self.path(draft_id)
        return self.read_path(path) if path is not None else None

    def _listed(self, fd: Optional[int]) -> list:
        """(mtime, name) of every packet file: regular files named as save() names them."""
        out = []
        with os.scandir(fd if fd is not None else self.folder) as entries:
            for e in entries:
                if e.name == OWED or not _PACKET.match(e.name):
                    continue
                with contextlib.suppress(OSError):     # gone since the listing
                    if e.is_file(follow_symlinks=False):
                        out.append((e.stat(follow_symlinks=False).st_mtime, e.name))
        return sorted(out, reverse=True)

    def paths(self) -> list:
        """Every packet file, newest first."""
        try:
            with private.folder_fd(self.folder, follow=False) as fd:
                return [self.folder / name for _, name in self._listed(fd)]
        except OSError as exc:
            self._say_link(exc)
            return []

    def _say_link(self, exc: OSError) -> None:
        if os.path.islink(self.folder) and not self._said_link:
            self._said_link = True
            log.error("the replay packets' folder %s is a link (%s); the service follows no link in its state "
                      "folder, so no packet is read, kept or trimmed there: remove the link", self.folder, exc)

    def packets(self) -> Iterator[tuple]:
        for p in self.paths():
            packet = self.read_path(p)
            if packet is not None:
                yield p, packet

    def newest(self, n: int) -> list:
        return [packet for _, packet in itertools.islice(self.packets(), max(0, n))]

    def read_path(self, path: Path) -> Optional[dict]:
        path = Path(path)
        try:
            with private.folder_fd(path.parent, follow=False) as fd:
                data = json.loads(private.read_bytes(path, dir_fd=fd).decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("calls"), list) else None

    def save(self, packet: dict) -> bool:
        path = self.path(packet.get("draft_id"))
        if path is None:
            log.warning("no replay packet for a draft id that is not a file name: %r", packet.get("draft_id"))
            return False
        try:
            private.make_dir(self.folder)
            with private.folder_fd(self.folder, follow=False) as fd:
                private.write_atomic(path, packet, dir_fd=fd)
                for _, name in self._listed(fd)[self.keep:]:
                    with contextlib.suppress(OSError):
                        os.unlink(private.at(self.folder / name, fd), dir_fd=fd)
        except OSError as exc:
            self._say_link(exc)
            log.warning("the replay packet for draft %s could not be written (%s)", packet.get("draft_id"), exc)
            return False
        return True

    def rewrite(self, path: Path, packet: dict) -> Optional[str]:
        """Write a changed packet in place, keeping its modification time: forgetting never moves it up the list.
        None when written, else why not (the scrub says it once)."""
        path = Path(path)
        try:
            with private.folder_fd(path.parent, follow=False) as fd:
                st = os.stat(private.at(path, fd), follow_symlinks=False, dir_fd=fd)
                private.write_atomic(path, packet, dir_fd=fd)
                os.utime(private.at(path, fd), ns=(st.st_atime_ns, st.st_mtime_ns), dir_fd=fd)
            return None
        except OSError as exc:
            return exc.strerror or str(exc)

    def owed(self) -> list:
        """The purged ids whose scrub could not finish yet (store/scrub.py clears them once no packet is left)."""
        try:
            with private.folder_fd(self.folder, follow=False) as fd:
                data = json.loads(private.read_bytes(self.folder / OWED, dir_fd=fd).decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):       # none owed, or a file that says nothing
            return []
        return [str(i) for i in data] if isinstance(data, list) else []

    def set_owed(self, ids: list) -> None:
        path = self.folder / OWED
        try:
            if ids:
                private.make_dir(self.folder)
                with private.folder_fd(self.folder, follow=False) as fd:
                    private.write_atomic(path, sorted(set(ids)), dir_fd=fd)
            elif os.path.lexists(path):
                with private.folder_fd(self.folder, follow=False) as fd:
                    os.unlink(private.at(path, fd), dir_fd=fd)
        except OSError as exc:
            log.error("could not record the purges still to scrub from the replay packets (%s)", exc)
