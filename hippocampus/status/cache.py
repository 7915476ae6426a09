"""The status, built and serialised once per change of what it is built from (read.built_from) and served as
bytes: most of the viewers' polls see the same status."""
from __future__ import annotations

import copy
import json
import threading
from typing import Callable


def encode(status: dict) -> bytes:
    """The JSON the HTTP answer carries (as Falcon's own media handler writes it)."""
    return json.dumps(status, ensure_ascii=False).encode("utf-8")


class StatusCache:
    def __init__(self, build: Callable[[], dict], key: Callable[[], tuple]) -> None:
        self._build, self._key = build, key
        self._lock = threading.Lock()           # one build at a time; readers of a fresh entry never wait
        self._entry: tuple = (object(), None, b"")

    def _current(self) -> tuple:
        key = self._key()
        if self._entry[0] != key:
            with self._lock:                        # the check again: another build may have made it fresh
                if self._entry[0] != key:
                    status = self._build()
                    self._entry = (key, status, encode(status))
        return self._entry

    def body(self) -> bytes:
        return self._current()[2]

    def status(self) -> dict:
        """A copy: callers add to it."""
        return copy.deepcopy(self._current()[1])
