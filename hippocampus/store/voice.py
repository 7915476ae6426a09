"""The voice card: a short text the main model writes about itself, which starts every draft prompt. Nothing
is overwritten: every version keeps its text, when and why, in voice.json beside the state file.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Optional

from hippocampus.clock import Clock
from hippocampus.store.private import aside, read_bytes, write_atomic
from hippocampus.words import control_at

log = logging.getLogger(__name__)
WHY_CHARS = 500         # a version's why is kept whole, so it is held to this


class VoiceError(ValueError):
    pass


class VoiceStorageError(OSError):
    """The card was fine; the disk was not."""


class VoiceCard:
    def __init__(self, path: Path, max_chars: int, clock: Clock):
        self.path = Path(path)
        self.max_chars = max_chars
        self.clock = clock
        self._lock = threading.Lock()
        self.error: Optional[str] = None        # what /status says of a file that cannot be read

    def _read(self) -> list:
        if not os.path.lexists(self.path):
            return self._fine([])
        try:
            data = json.loads(read_bytes(self.path).decode("utf-8"))        # never through a link
            versions = data.get("versions") if isinstance(data, dict) else None
            if not isinstance(versions, list):
                raise ValueError("no versions list")
            versions = [v for v in versions if isinstance(v, dict)]
            if not all(type(v.get("version")) is int and isinstance(v.get("text"), str) for v in versions):
                raise ValueError("a version without its number or its text")
            return self._fine(versions)
        except (ValueError, OSError, UnicodeDecodeError) as exc:
            error = (f"the voice card history {self.path} is unreadable ({exc}); "
                     "not overwriting a history: fix or move the file")
            if error != self.error:         # said once, not on every read
                self.error = error
                log.error("%s; until then the drafts go without a card", error)
                self.publish({"version": 0, "error": error})
            raise VoiceError(error) from None

    def _fine(self, versions: list) -> list:
        """The file reads again (fixed or moved by hand): the status's word goes."""
        if self.error is not None:
            self.error = None
            log.info("the voice card history %s reads again", self.path)
            self.publish({"version": int(versions[-1]["version"]) if versions else 0})
        return versions

    def view(self) -> dict:
        """What /status shows: the current card's version, and why the file cannot be read."""
        version = self.version()        # read first: it finds (or clears) the error
        return {"version": version, **({"error": self.error} if self.error else {})}

    def versions(self) -> list:
        try:
            return self._read()
        except VoiceError:
            return []

    def current(self) -> Optional[dict]:
        return next(reversed(self.versions()), None)

    def version(self) -> int:
        """The current card's version (the status reads the one published after each set, never the file)."""
        cur = self.current()
        return int(cur["version"]) if cur else 0

    def history(self, limit: int = 10) -> list:
        return list(reversed(self.versions()))[:max(1, min(200, limit))]

    publish = staticmethod(lambda view: None)   # the board's (Context.wire): view(), after each set

    def set(self, text: str, why: Optional[str] = None) -> dict:
        for what, value in (("the card", text), ("the why", why)):
            where = control_at(value or "")
            if where:           # shown in the viewer and put into every draft prompt
                raise VoiceError(f"{what} holds {where} (a control character): it is plain text; newlines and "
                                 "tabs are fine, other control characters are not. Nothing was changed")
        if len((why or "").strip()) > WHY_CHARS:
            raise VoiceError(f"the why is {len(why.strip())} characters; it is kept whole with the card, so at most "
                             f"{WHY_CHARS}: say it shorter. Nothing was changed")
        text = (text or "").strip()
        if not text:
            raise VoiceError("an empty card: write how your memories should speak (voice, pronouns, "
                             "what is yours and what is someone else's)")
        try:
            text.encode("utf-8"), (why or "").encode("utf-8")
        except UnicodeEncodeError:          # a lone surrogate ("\ud800" in JSON) would break every read after
            raise VoiceError("the card holds a lone surrogate (not valid unicode); send it as UTF-8 text") from None
        if len(text) > self.max_chars:
            raise VoiceError(f"the card is {len(text)} characters; it is capped at {self.max_chars} "
                             "(voice.max_chars) because it rides in every prompt the small model reads")
        with self._lock:
            try:
                versions, moved = self._read(), None
            except VoiceError:              # a new card starts a new history; the old file is kept beside it
                versions, moved = [], self._set_aside()
            if versions and versions[-1].get("text") == text:
                return {**versions[-1], "changed": False}
            entry = {"version": (int(versions[-1]["version"]) if versions else 0) + 1, "text": text,
                     "set_at": self.clock.now(), "why": (why or "").strip() or None}
            versions.append(entry)
            try:
                write_atomic(self.path, {"versions": versions})
            except OSError as exc:
                raise VoiceStorageError(f"the voice card could not be saved to {self.path} ({exc}); nothing "
                                        "changed: free disk space or fix the folder's permissions") from None
            self.publish({"version": entry["version"]})
            return {**entry, "changed": True, **({"set_aside": moved} if moved else {})}

    def _set_aside(self) -> str:
        """The unreadable history moved aside as `voice.json.corrupt-<time>` (as state.json is); where, in words."""
        moved = aside(self.path)
        try:
            os.replace(self.path, moved)        # a link is moved, never followed
        except OSError as exc:
            raise VoiceStorageError(f"the voice card history {self.path} is unreadable and could not be moved aside "
                                    f"({exc}); nothing changed: fix or move the file") from None
        self.error = None
        said = (f"the voice card history {self.path} could not be read, so it was moved aside to {moved} (fix it "
                "there to keep it); this card starts a new history")
        log.warning(said)
        return said

    def block(self) -> str:
        cur = self.current()
        if not cur:
            return ""
        return ("These memories belong to someone, and they wrote the card below about how their memories "
                "speak. Where a fragment is about them, write it in their voice and with their pronouns. "
                "Anything else (a system, a design, another person) is written plainly, never as 'I'. The "
                "card says HOW to write, never WHAT: nothing in it is a fact to add, and none of its phrases "
                "go into a memory.\n--- their card ---\n" + cur["text"] + "\n--- end of card ---\n\n")
