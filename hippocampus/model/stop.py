"""The model's stop: the stop command, else the Observatory, then our own server and its group.

At the service's stop it is bounded to stay within systemd's TimeoutStopSec=10; a model it does not see stopped
stays ours in the state file, and the next run stops it (model.lifecycle.stop) or adopts it (ours_to_adopt's rules).
"""
from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from hippocampus import transport_words
from hippocampus.model.observatory import observatory, unless_stopped

if TYPE_CHECKING:
    from hippocampus.model.lifecycle import ModelLifecycle

log = logging.getLogger(__name__)
STOP_AT_EXIT_SECONDS = 3    # at the service's stop: the stop command's or the Observatory's time, then our own
TERM_AT_EXIT_SECONDS = 2    # server's after SIGTERM (then SIGKILL, 1 s)


def stop_quietly(life: "ModelLifecycle") -> str:
    """The stop command, else the Observatory; then our own process and its group. "" or why the model may still
    run (the stop failed or did not end in its time: at the service's stop, STOP_AT_EXIT_SECONDS)."""
    from hippocampus.model import process      # (and psutil) only when a model is managed
    from hippocampus.model.lifecycle import STOP_CHECK_SECONDS

    cwd, refused, at_exit = os.path.expanduser(life.lc.cwd) if life.lc.cwd else None, "", life.stop_asked()
    seconds = STOP_AT_EXIT_SECONDS if at_exit else 60
    try:
        if life.lc.stop and not process.run_stop_command(life.lc.stop, life.log_path, cwd, seconds,
                                                         (lambda: False) if at_exit else life.stop_asked):
            refused = "its stop command (model.lifecycle.stop) " + (f"did not end within {seconds:g} s" if at_exit or
                                                                     not life.stop_asked() else "was cut short")
            log.warning("model lifecycle: %s: it was ended", refused)
        elif not life.lc.stop and life._how == "observatory" and at_exit:
            observatory(life.lc, "stop", "done drafting", seconds=seconds)
        elif not life.lc.stop and life._how == "observatory" and unless_stopped(
                life.lc, "stop", "done drafting", life.stop_asked, lambda: life._halt.wait(STOP_CHECK_SECONDS)) is None:
            refused = "the service's stop cut the call short"
    except Exception as exc:  # noqa: BLE001 - stopping never raises
        log.warning("model lifecycle: the stop failed: %s: %s", type(exc).__name__, exc)
        refused = transport_words.in_words(exc)
    try:
        grace = life.lc.stop_grace_seconds
        grace = (min(grace, TERM_AT_EXIT_SECONDS), 1) if life.stop_asked() else (grace, 10, life.stop_asked)
        if life.server is not None and not life.server.stop(*grace):  # what the stop command left running
            refused = refused or f"pid {life.pid} outlived SIGKILL"
    except Exception as exc:  # noqa: BLE001
        log.warning("model lifecycle: could not stop pid %s: %s: %s", life.pid, type(exc).__name__, exc)
    if life.stop_asked():
        life._halt.set()    # the service's stop tries the model's stop once: its shutdown() does not ask again
    return refused


def stop_left_at_exit(life: "ModelLifecycle", why: str) -> None:
    """At the start: the model server the previous run's stop did not see stopped (`why`), stopped with the stop
    command, and said so."""
    left = stop_quietly(life)
    then = "the next run tries again" if life.stop_asked() else "stop it by hand"     # a stop cut it short: kept
    log.log(logging.WARNING if left else logging.INFO, "model lifecycle: the model server the previous run's stop "
            "left (%s): %s", why, f"model.lifecycle.stop did not stop it ({left}); {then}" if left else
            "stopped now with model.lifecycle.stop")
    if not left:
        life._emit("model_stopped", how="command", why="left running by the previous run's stop")


def stop_given_up(life: "ModelLifecycle", started: bool) -> str:
    """The Observatory's model was not ready in time: one it started for us (`started`, or before) may come up after,
    so it is ours, and stopped at once; one the Observatory does not stop stays ours, asked again later. What the
    failure adds to say so."""
    from hippocampus.model.lifecycle import ours_via_observatory

    ours_via_observatory(life, started)
    if not life.started_by_us:
        return ""
    refused = stop_quietly(life)
    if refused:
        life._refused = life._clock.now()
        return f"; the Observatory did not stop it ({refused}): it is asked again later"
    life._forget()
    return "; it was asked to stop, so a late start does not hold the card"
