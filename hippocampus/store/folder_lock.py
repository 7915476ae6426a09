"""One service per state folder: `service.lock` in it, held with an OS lock for the life of the process.

The OS lets the lock go when the process ends, however it ends (a kill -9 too), so a stale file never
refuses a start. The file says who holds it (pid, host, since when), for the refusal of a second process.
A second hold in the same process (a test, a restart in-process) shares the first.
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

LOCK_FILE = "service.lock"
_WINDOWS_BYTE = 1 << 20        # Windows locks a byte past what the file says, so the holder stays readable

_held: dict = {}               # resolved folder -> [file, count]
_guard = threading.Lock()


class FolderHeld(Exception):
    """Another process serves this state folder; str() is the one line for the person."""


def _try_lock(f) -> bool:
    try:
        if os.name == "nt":
            import msvcrt
            f.seek(_WINDOWS_BYTE)
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            import fcntl
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _holder(path: Path) -> str:
    try:
        who = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        who = {}
    since = who.get("since")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since)) if isinstance(since, (int, float)) else "?"
    return f"pid {who.get('pid', '?')} on {who.get('host', '?')}, since {when}"


def hold(folder: Path) -> Path:
    """Hold the folder's lock for this process (FolderHeld if another process holds it); returns the key."""
    key = Path(folder).resolve()
    with _guard:
        if key in _held:
            _held[key][1] += 1
            return key
        path = key / LOCK_FILE
        f = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+", encoding="utf-8")   # private, as the rest
        if not _try_lock(f):
            f.close()
            raise FolderHeld(
                f"another seren-hippocampus ({_holder(path)}) already runs on the state folder {key}: one "
                "service per state folder. Stop that one first, or give this one its own sleep.state_path")
        f.seek(0)
        f.truncate()
        f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}))
        f.flush()
        _held[key] = [f, 1]
        return key


def release(key: Path) -> None:
    with _guard:
        entry = _held.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del _held[key]
            entry[0].close()        # closing the file lets the OS lock go (the file stays: no race on it)
