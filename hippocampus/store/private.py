"""The state folder: created 0700 and every file the service writes in it 0600 (POSIX; on Windows the folder
inherits the profile's ACL), JSON written atomically (a corrupt file set aside), and one service per folder:
`service.lock`, held with an OS lock for the life of the process, so a kill -9 leaves no stale lock.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any, Optional

log = logging.getLogger("hippocampus.state")

POSIX = os.name != "nt"
DIR_MODE = 0o700
FILE_MODE = 0o600
# what the service writes in the state folder (the folder may be shared with other things: only these
# are tightened, never every file in it), and the folders it makes there (everything under them is ours)
OURS = ("state.json", "events.jsonl", "events.json", "voice.json", "ripple.log", "model.log")
OURS_LIKE = ("*.tmp", "state.json.corrupt-*", "events.json*.corrupt-*", "voice.json.corrupt-*")
OUR_FOLDERS = ("replays",)
NAMED = 12                  # the start-up line names this many of what it tightened, then counts the rest
_BINARY = getattr(os, "O_BINARY", 0)
LOCK_FILE = "service.lock"
_WINDOWS_BYTE = 1 << 20        # Windows locks a byte past what the file says, so the holder stays readable
_held: dict = {}               # resolved folder -> [file, count] of the lock held by this process
_guard = threading.Lock()


def make_dir(folder: Path) -> None:
    """The folder and its parents, if missing; the folder itself 0700."""
    folder = Path(folder)
    if folder.is_dir():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=DIR_MODE)
    except FileExistsError:
        if not folder.is_dir():
            raise
        return                       # made by someone else meanwhile: its mode is theirs
    if POSIX:
        os.chmod(folder, DIR_MODE)   # whatever the umask


def open_append(path: Path) -> int:
    """A descriptor appending to path, which is created 0600 if it is not there."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _BINARY, FILE_MODE)


def prepare(folder: Path) -> None:
    """At start-up: make the folder, and make private what an older version wrote in it 0644 (files) or 0755
    (replays/). The folder itself may not be ours: it is never changed, only warned about."""
    folder = Path(folder)
    try:
        make_dir(folder)
    except OSError as exc:
        log.error("the state folder %s could not be made (%s): the state is kept in memory until it can",
                  folder, exc)
        return
    if not POSIX:
        return
    files = {folder / n for n in OURS} | {p for pattern in OURS_LIKE for p in folder.glob(pattern)}
    folders: list = []
    for name in OUR_FOLDERS:
        top = folder / name
        if top.is_dir() and not top.is_symlink():
            for root, _, names in os.walk(top):              # symlinks are not followed
                folders.append(Path(root))
                files |= {Path(root) / n for n in names}
    tightened = [t for p in sorted(folders) + sorted(files) if (t := _tighten(p, folder))]
    if tightened:
        shown = ", ".join(tightened[:NAMED]) + (f" and {len(tightened) - NAMED} more" if len(tightened) > NAMED else "")
        log.info("made private in %s (folders 0700, files 0600): %s", folder, shown)
    try:
        mode = stat.S_IMODE(folder.stat().st_mode)
    except OSError:
        return
    if mode & 0o077:
        log.warning("the state folder %s is open to other accounts (mode %03o); what the service keeps in it is "
                    "private, and `chmod 700 %s` closes the folder too", folder, mode, folder)


def _tighten(path: Path, folder: Path) -> str:
    """0700 for a folder, 0600 for a file, if it was open to others; its relative name if it was changed."""
    try:
        st = path.lstat()
        is_dir = stat.S_ISDIR(st.st_mode)
        if not (is_dir or stat.S_ISREG(st.st_mode)) or not st.st_mode & 0o077:
            return ""                    # a symlink or anything else is left alone, as is what is private
        os.chmod(path, DIR_MODE if is_dir else FILE_MODE)
        return path.relative_to(folder).as_posix() + ("/" if is_dir else "")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        log.warning("could not make %s private (%s)", path, exc)
        return ""


def encode(data: Any) -> str:
    # compact: an indent sends json to its pure-Python encoder, ~6x slower (the events are encoded per emit)
    return json.dumps(data, separators=(",", ":"), sort_keys=True, default=str)


def write_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, encode(data))


def write_text_atomic(path: Path, raw: str) -> None:
    """Temp file (0600, a leftover too), fsync, rename. The caller holds no lock a reader needs: an fsync can
    take seconds."""
    path = Path(path)
    make_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _BINARY, FILE_MODE)
    if POSIX:
        os.fchmod(fd, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_or_set_aside(path: Path, what: str) -> Optional[Any]:
    """The file's JSON; None if it does not exist or is corrupt (then renamed `<name>.corrupt-<timestamp>`)."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, OSError) as exc:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(path, aside)
            log.error("the %s file %s could not be read (%s); moved it aside to %s and started clean",
                      what, path, exc, aside)
        except OSError as exc2:
            log.error("the %s file %s could not be read (%s) nor moved aside (%s); starting clean",
                      what, path, exc, exc2)
        return None


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
        f = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE), "r+", encoding="utf-8")
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
