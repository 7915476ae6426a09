"""Atomic JSON files: write to a temp file (0600), fsync, rename. A corrupt file is moved aside."""
from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any, Optional

from hippocampus.store import private

log = logging.getLogger("hippocampus.state")


def encode(data: Any) -> str:
    # compact: an indent sends json to its pure-Python encoder, ~6x slower (the events are encoded per emit)
    return json.dumps(data, separators=(",", ":"), sort_keys=True, default=str)


def write_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, encode(data))


def write_text_atomic(path: Path, raw: str) -> None:
    """Temp file (0600: the file keeps its mode), fsync, rename. The caller holds no lock a reader
    needs: an fsync can take seconds."""
    path = Path(path)
    private.make_dir(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    with os.fdopen(private.create(tmp), "w", encoding="utf-8") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_or_set_aside(path: Path, what: str) -> Optional[Any]:
    """The file's JSON; None if it does not exist. A corrupt one is renamed
    `<name>.corrupt-<timestamp>`, named in the log, and None is returned."""
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
