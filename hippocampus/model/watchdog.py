"""The model server's watchdog: a tiny parent that stops the server when the service that launched it dies.

`python -I watchdog.py GRACE -- COMMAND...` (`GRACE --line "COMMAND LINE"` on Windows), a pipe from the service
on stdin: it writes COMMAND's pid on stdout, then exits with its code, or, when stdin ends or SIGTERM comes,
stops COMMAND's group (killed after GRACE s). PR_SET_PDEATHSIG would fire when the launching *thread* ends.
Standard library only and run by path, so it starts in tens of milliseconds.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading

WINDOWS = os.name == "nt"


def _signal(child: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(OSError):
        if WINDOWS:
            child.kill() if sig == getattr(signal, "SIGKILL", None) else child.terminate()
        else:
            os.killpg(child.pid, sig)       # the child leads its own group: a start script's children too


def _stop(child: subprocess.Popen, grace: float) -> None:
    _signal(child, signal.SIGTERM)
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"watchdog: pid {child.pid} ignored SIGTERM for {grace:g} s; killing it\n")
        _signal(child, getattr(signal, "SIGKILL", signal.SIGTERM))
        child.wait()
    if not WINDOWS:
        _signal(child, signal.SIGKILL)      # whatever of its group outlived it


def main(argv: list) -> int:
    grace = float(argv[0])
    extra = {"creationflags": subprocess.CREATE_NO_WINDOW} if WINDOWS else {"start_new_session": True}  # type: ignore
    try:
        cmd = argv[2] if argv[1] == "--line" else argv[2:]
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=2, stderr=2, **extra)
    except Exception as exc:  # noqa: BLE001 - told to the service on stdout, as the launch's error
        sys.stdout.write(f"{type(exc).__name__}: {exc}\n")
        return 127
    sys.stdout.write(f"{child.pid}\n")
    sys.stdout.flush()
    os.close(1)
    wake, let_go = threading.Event(), threading.Event()

    def service_gone() -> None:
        with contextlib.suppress(OSError):
            while sys.stdin.buffer.read(4096):
                pass
        let_go.set()
        wake.set()

    def child_gone() -> None:
        child.wait()
        wake.set()

    threading.Thread(target=service_gone, daemon=True).start()
    threading.Thread(target=child_gone, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: (let_go.set(), wake.set()))
    while not wake.wait(1.0):
        pass
    if let_go.is_set() and child.poll() is None:
        sys.stderr.write(f"watchdog: the service let go of pid {child.pid} (it exited or died); stopping it\n")
        sys.stderr.flush()
        _stop(child, grace)
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):      # stdout's descriptor was closed after the pid went out
            stream.flush()
    os._exit(status)        # not sys.exit: the thread blocked reading stdin must not hold up the interpreter's end
