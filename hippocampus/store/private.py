"""Private files: the state folder is created 0700 and every file the service writes in it is 0600 (POSIX).

The folder holds topic names, the voice card's every version and the event log: nobody else on the box
reads them. On Windows, modes mean nothing: the folder lives under the person's profile and inherits its
default ACL (the person, SYSTEM, Administrators), so only the folder is made here.
"""
from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

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


def make_dir(folder: Path) -> None:
    """The folder and its parents, if missing; the folder itself is created 0700."""
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


def create(path: Path) -> int:
    """A descriptor on path, emptied, for writing: created 0600 (a leftover file is made 0600 too)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _BINARY, FILE_MODE)
    if POSIX:
        os.fchmod(fd, FILE_MODE)
    return fd


def open_append(path: Path) -> int:
    """A descriptor appending to path, which is created 0600 if it is not there."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _BINARY, FILE_MODE)


def prepare(folder: Path) -> None:
    """At start-up: make the folder (0700), and make what the service wrote in it private (an older version
    wrote its files 0644 and the replays folder 0755): our files 0600, our folders (replays/) 0700 and
    every file under them 0600. One log line says what was tightened. The folder itself is never changed
    (it may not be ours): a warning says so when it is open to other accounts."""
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
    """0700 for a folder, 0600 for a file, if it was open to others; its name (relative) if it was changed."""
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
