"""The replay packets: every model call of a sleep or a redraft, kept until its draft is posted, then saved
as `replays/<draft_id>.json` beside the state file, 0600 (a packet holds the person's fragments). The newest
KEEP are kept. Nothing here raises into the sleep: a packet is never worth a failed draft.
"""
from __future__ import annotations

import contextlib
import copy
import itertools
import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterator, Optional

from hippocampus.store import private

log = logging.getLogger("hippocampus.replay")

VERSION = 1
FOLDER = "replays"
KEEP = 300
OWED = "forget-owed.json"          # purged ids whose scrub could not finish yet (Memory did not answer)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")

_lock = threading.Lock()
_open: dict = {}            # state folder -> the calls of the run in progress there


def store_for(cfg) -> PacketStore:
    return PacketStore(cfg.state_dir / FOLDER)


def begin(ctx) -> None:
    """A sleep or a redraft starts: what an earlier run left unposted is dropped."""
    with _lock:
        _open[str(ctx.cfg.state_dir)] = []


def record(ctx, stage: str, topic: Optional[str], prompt: str, markers, candidates: list, *,
           answer: Any = None, parsed: Any = None, error: Optional[str] = None, **more: Any) -> None:
    """One model call: what it was shown (with the markers' ids), what it answered, what was read from it."""
    try:
        call = _call(stage, topic, prompt, markers, candidates, answer, parsed, error)
        call.update(copy.deepcopy(more))
        with _lock:
            _open.setdefault(str(ctx.cfg.state_dir), []).append(call)
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not capture a model call for its replay packet")


def _call(stage, topic, prompt, markers, candidates, answer, parsed, error) -> dict:
    by_id = {c.get("id"): c for c in candidates or [] if isinstance(c, dict)}
    entries = [{"marker": m, "id": markers.fragments.get(m), "content": row.get("content"),
                "ts": row["metadata"].get("ts") if isinstance(row.get("metadata"), dict) else None}
               for m, row in markers.entries.items()]
    cores = [{"marker": m, "id": cid, "content": (by_id.get(cid) or {}).get("content"),
              "via": (by_id.get(cid) or {}).get("via")} for m, cid in markers.cores.items()]
    call = {"stage": stage, "topic": topic, "prompt": prompt, "entries": entries, "candidates": cores,
            "answer": None, "finish_reason": None, "served": None, "seconds": None, "tokens": None,
            "ops": [], "dropped": [], "cut_off": False, "error": error, "failure": None, "response_format": None}
    if answer is not None:
        call.update(answer=answer.text, finish_reason=answer.finish_reason, served=answer.served,
                    seconds=round(float(answer.seconds), 3), tokens=getattr(answer, "usage", None),
                    response_format=copy.deepcopy(getattr(answer, "response_format", None)))
    if parsed is not None:
        call.update(ops=copy.deepcopy(parsed.operations), dropped=list(parsed.dropped),
                    cut_off=bool(parsed.cut_off), failure=parsed.failure)
    return call


def seal(ctx, draft_id: Optional[str], body: dict) -> None:
    """Memory took the draft: its calls become replays/<draft_id>.json."""
    with _lock:
        calls = _open.pop(str(ctx.cfg.state_dir), [])
    if not calls or not draft_id:
        return
    try:
        packet = {"version": VERSION, "draft_id": draft_id, "created_at": ctx.clock.now(),
                  "stamp": copy.deepcopy(body.get("extra") or {}), "attempt": int(body.get("attempt") or 1),
                  "brief_id": body.get("brief_id_used"), "cluster_id": body.get("cluster_id") or draft_id,
                  "calls": calls, "operations": copy.deepcopy(body.get("operations") or []),
                  "max_tokens": ctx.cfg.model.max_tokens, "core_chars": ctx.cfg.sleep.core_chars}
        previous = body.get("previous_draft_ids") or []
        if packet["attempt"] > 1 and previous:
            packet["redraft_of"] = previous[-1]
        store_for(ctx.cfg).save(packet)
    except Exception:  # noqa: BLE001 - capture never fails a sleep
        log.exception("could not save the replay packet for draft %s", draft_id)


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
