"""The state folder: created 0700 and every file the service writes in it 0600 (POSIX; on Windows the folder
inherits the profile's ACL), JSON written atomically (a corrupt file set aside), and one service per folder:
`service.lock`, held with an OS lock for the life of the process, so a kill -9 leaves no stale lock.

Nothing in the folder is followed through a link (POSIX): every file is opened O_NOFOLLOW relative to its
folder's descriptor, so a link planted where a file or `replays/` should be is never written through. A state
folder owned by another account, or writable by others, is refused at start (FolderRefused: one line).
"""
from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any, Optional

from hippocampus.words import hhmm

log = logging.getLogger(__name__)

POSIX = os.name != "nt"
DIR_MODE = 0o700
FILE_MODE = 0o600
# what the service writes in the state folder (the folder may be shared with other things: only these
# are tightened, never every file in it), and the folders it makes there (everything under them is ours)
OURS = ("state.json", "events.jsonl", "events.json", "voice.json", "ripple.log", "model.log", "service.lock")
OURS_LIKE = ("*.tmp", "state.json.corrupt-*", "events.json*.corrupt-*", "voice.json.corrupt-*", "*.log.1")
LOG_BYTES = 5_000_000       # a log (ripple.log, model.log) past this is moved to <name>.1 as it is next opened
OUR_FOLDERS = ("replays",)
NAMED = 12                  # the start-up line names this many of what it tightened, then counts the rest
_BINARY = getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
DIR_FDS = POSIX and os.open in os.supports_dir_fd and os.replace in os.supports_dir_fd and bool(_DIRECTORY)
LOCK_FILE = "service.lock"
_WINDOWS_BYTE = 1 << 20        # Windows locks a byte past what the file says, so the holder stays readable
_held: dict = {}               # resolved folder -> [file, count] of the lock held by this process
_guard = threading.Lock()


def make_dir(folder: Path) -> None:
    """The folder and its parents, if missing; the folder itself 0700."""
    folder = Path(folder)
    if folder.is_dir():
        return
    try:
        folder.mkdir(mode=DIR_MODE, parents=True)      # the parents as the umask makes them, the folder 0700
    except FileExistsError:
        if not folder.is_dir():
            raise
        return                       # made by someone else meanwhile: its mode is theirs
    if POSIX:
        os.chmod(folder, DIR_MODE)   # whatever the umask


def open_append(path: Path) -> int:
    """A descriptor appending to path, which is created 0600 if it is not there; a link there is not followed."""
    return open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


def roll(path: Path, limit: int = LOG_BYTES) -> None:
    """A log past `limit` becomes <name>.1 (the one before is dropped), so two generations at most are kept."""
    try:
        if os.lstat(path).st_size > limit:
            os.replace(path, path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    except OSError as exc:
        if not POSIX and getattr(exc, "winerror", None) == 32:    # a sharing violation: another process has it open
            log.warning("%s could not be moved aside to %s.1 yet (%s): a process still running (a ripple, the model "
                        "server) has it open; it is moved aside at a later opening", path, path.name,
                        exc.strerror or exc)
            return
        log.warning("%s could not be moved aside to %s.1 (%s), so it keeps growing: free disk space or fix the "
                    "folder's permissions", path, path.name, exc.strerror or exc)


class FolderRefused(Exception):
    """The service cannot start on this state folder; str() is the one line for the person (cause and fix)."""


def _link_error(exc: OSError, path: Path) -> OSError:
    """ELOOP (EMLINK on the BSDs) from O_NOFOLLOW said plainly; any other error as it was."""
    if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and os.path.islink(path):
        return OSError(errno.ELOOP, "it is a link, and the service follows no link in its state folder: "
                                    "remove the link", str(path))
    return exc


@contextlib.contextmanager
def folder_fd(folder: Path, *, follow: bool = True):
    """A descriptor of the folder (None where the platform has no dir_fd); follow=False: the folder itself
    may not be a link (a folder the service makes, like replays/)."""
    if not DIR_FDS:
        if not follow and os.path.islink(folder):
            raise _link_error(OSError(errno.ELOOP, "link"), Path(folder))
        yield None
        return
    try:
        fd = os.open(folder, os.O_RDONLY | _DIRECTORY | (0 if follow else _NOFOLLOW))
    except OSError as exc:
        raise _link_error(exc, Path(folder)) from None
    try:
        yield fd
    finally:
        os.close(fd)


def at(path: Path, dir_fd: Optional[int]):
    """What names the file for an os call given dir_fd: its name in that folder, or its whole path without one."""
    return Path(path).name if dir_fd is not None else path


def open_file(path: Path, flags: int, *, dir_fd: Optional[int] = None) -> int:
    """os.open of a file in the state folder, never through a link (created 0600)."""
    try:
        return os.open(at(path, dir_fd), flags | _NOFOLLOW | _BINARY, FILE_MODE, dir_fd=dir_fd)
    except OSError as exc:
        raise _link_error(exc, Path(path)) from None


def read_bytes(path: Path, *, dir_fd: Optional[int] = None) -> bytes:
    """A file's bytes, never through a link."""
    with os.fdopen(open_file(path, os.O_RDONLY, dir_fd=dir_fd), "rb") as fh:
        return fh.read()


def prepare(folder: Path) -> None:
    """At start-up: make the folder, refuse one another account owns or others may write in (FolderRefused:
    whoever can write there can plant links and files the service would trust), and make private what an older
    version wrote in it 0644 (files) or 0755 (replays/). The folder itself may not be ours: it is never changed;
    readable by others, it is warned about."""
    folder = Path(folder)
    try:
        make_dir(folder)
    except OSError as exc:
        raise FolderRefused(f"the state folder {folder} could not be made ({_reason(exc)}): make it by hand, "
                            "writable by this account, or set sleep.state_path to a folder it can write") from None
    why = refusal(folder)
    if why:
        raise FolderRefused(why)
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
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(os.stat(folder).st_mode)
        if mode & 0o077:             # the folder itself is never changed (tightening is of what is in it)
            log.warning("the state folder %s is open to other accounts (mode %03o); what the service keeps in it is "
                        "private, and `chmod 700 %s` closes the folder too", folder, mode, folder)


def refusal(folder: Path) -> Optional[str]:
    """Why the start-up refuses this folder (another account's, or others may write in it), with what to do; None
    if it does not (or it is not there yet, or not POSIX). Reads, never changes."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    if not POSIX:
        return None
    me, mode = os.geteuid(), stat.S_IMODE(st.st_mode)
    if st.st_uid != me:
        return (f"the state folder {folder} belongs to another account (uid {st.st_uid}; this service runs as uid "
                f"{me}): run `chown {me} {folder}` and `chmod 700 {folder}`, or set sleep.state_path to a folder "
                "of this account's own")
    if mode & 0o022:
        return (f"the state folder {folder} can be written by other accounts (mode {mode:03o}): run "
                f"`chmod 700 {folder}`, or set sleep.state_path to a private folder")
    return None


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


def write_atomic(path: Path, data: Any, *, dir_fd: Optional[int] = None) -> None:
    write_text_atomic(path, encode(data), dir_fd=dir_fd)


def write_text_atomic(path: Path, raw: str, *, dir_fd: Optional[int] = None) -> None:
    """Temp file (0600, a leftover too), fsync, rename; neither followed through a link. dir_fd: the folder,
    already opened (else its descriptor is opened here). The caller holds no lock a reader needs: an fsync
    can take seconds."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if dir_fd is None:
        make_dir(path.parent)
    with folder_fd(path.parent) if dir_fd is None else contextlib.nullcontext(dir_fd) as fd:
        with contextlib.suppress(FileNotFoundError):        # a leftover, or a link planted there: ours to replace
            os.unlink(at(tmp, fd), dir_fd=fd)
        with os.fdopen(open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, dir_fd=fd), "w", encoding="utf-8") as fh:
            if POSIX:
                os.fchmod(fh.fileno(), FILE_MODE)
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(at(tmp, fd), at(path, fd), src_dir_fd=fd, dst_dir_fd=fd)     # a link at `path` is replaced


def aside(path: Path) -> Path:
    """Where a file that cannot be read is moved: `<name>.corrupt-<YYYYmmdd-HHMMSS>` beside it."""
    return path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")


def read_or_set_aside(path: Path, what: str) -> Optional[Any]:
    """The file's JSON; None if it does not exist or is corrupt (then renamed `<name>.corrupt-<timestamp>`)."""
    path = Path(path)
    if not os.path.lexists(path):
        return None
    try:
        return json.loads(read_bytes(path).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, OSError) as exc:        # a link is set aside, never followed
        moved = aside(path)
        try:
            os.replace(path, moved)
            log.error("the %s file %s could not be read (%s); moved it aside to %s and started clean",
                      what, path, exc, moved)
        except OSError as exc2:
            log.error("the %s file %s could not be read (%s) nor moved aside (%s); starting clean",
                      what, path, exc, exc2)
        return None


class FolderHeld(FolderRefused):
    """Another process serves this state folder; str() is the one line for the person."""


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


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
        who = json.loads(read_bytes(path).decode("utf-8") or "{}")
    except (OSError, ValueError):
        who = {}
    if not isinstance(who, dict):        # another program's JSON there: the holder is unknown, not a traceback
        who = {}
    since = who.get("since")
    when = hhmm(since, day=True) if isinstance(since, (int, float)) else "?"
    return f"pid {who.get('pid', '?')} on {who.get('host', '?')}, since {when}"


def hold(folder: Path) -> Path:
    """Hold the folder's lock for this process (FolderHeld if another process holds it); returns the key."""
    key = Path(folder).resolve()
    with _guard:
        if key in _held:
            _held[key][1] += 1
            return key
        path = key / LOCK_FILE
        try:
            fd = open_file(path, os.O_RDWR | os.O_CREAT)
            if POSIX:
                os.fchmod(fd, FILE_MODE)        # one an older version left 0644 too
        except OSError as exc:
            raise FolderRefused(
                f"the state folder {key} cannot be written ({_reason(exc)}: {path}): make it writable by this "
                "account, or set sleep.state_path to a folder it can write") from None
        f = os.fdopen(fd, "r+", encoding="utf-8")
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
