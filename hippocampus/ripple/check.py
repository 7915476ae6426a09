"""Would a wake-up work? The brief's preconditions for the configured ripple, one `Line` each, over a
`Probe` of the world; the one-sentence view of them /status shows as ``wakeup``; and `check-ripple --fire`'s
one harmless wake-up through the real route."""
from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from hippocampus import transport_words
from hippocampus.config import RippleConfig, redact
from hippocampus.ripple import claude as claude_setup
from hippocampus.ripple.claude_checks import claude_lines, is_claude
from hippocampus.ripple.fire import WOKEN, Ripple, argv_of
from hippocampus.ripple.probe import CHECK_TIMEOUT, Line, Probe
from hippocampus.store import private

_OWN_PATH = "{}'s PATH (~/.local/bin, ~/bin, then the service's PATH)"
_WHO = {"windows-session": "{}'s session", "runuser": _OWN_PATH, "sudo": _OWN_PATH}
FIRE_EVENT = "wake_check"
OUTPUT_LINES = 5
LINE_CHARS = 200
KILL_GRACE = 20.0          # past --fire's limit, for the reaper's stop (TERM_GRACE, then 10 s for its kill)
FIRE_MESSAGE = (f"{WOKEN}\n\nThis is only a wake-up check (seren-hippocampus check-ripple --fire), not a task: "
                "reply OK; nothing to do. Do not call any tools.")


def checks(rcfg: RippleConfig, *, memory_url: str = "", probe: Optional[Probe] = None) -> list:
    probe = probe or Probe()
    kind = (rcfg.type or "").strip().lower()
    if kind == "endpoint":
        return [Line("type", True, "endpoint: the ripple is a POST to a receiver that runs its own command"),
                _url_line(rcfg, probe)]
    if kind != "script":
        return [Line("type", False, "the ripple is off (ripple.type is empty), so nothing wakes the main model: "
                                    "give --ripple-claude DIR to wake Claude Code on this box, or --ripple "
                                    "endpoint --ripple-url URL for another box")]
    return _script_lines(rcfg, memory_url, probe)


def _url_line(rcfg: RippleConfig, probe: Probe) -> Line:
    url = (rcfg.url or "").strip()
    if not url:
        return Line("url", False, "ripple.url is empty: give --ripple-url (an Observatory's or Lodestar's "
                                  "ripple route, e.g. http://host:7401/api/v1/system/ripple)")
    try:
        bearer = rcfg.resolve_bearer()
    except Exception:  # noqa: BLE001 - a pointer that cannot be read: no bearer
        bearer = ""
    shown = redact.url(url)
    try:
        status = probe.http_get(url, {"Authorization": f"Bearer {bearer}"} if bearer else {}, CHECK_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the answer
        did = transport_words.failed_predicate(exc, seconds=CHECK_TIMEOUT)[1]
        return Line("url", False, f"{shown} does not answer ({did}): "
                                  f"start the receiver (its Observatory or Lodestar), or fix ripple.url")
    if status == 404:
        return Line("url", False, f"{shown} answers 404, so there is no ripple route at that path: point "
                                  f"ripple.url at the receiver's ripple route (/api/v1/system/ripple)")
    if status in (401, 403):
        return Line("url", False, f"{shown} answers {status}: it wants a bearer this service does not send "
                                  f"(give --ripple-token-env NAME or --ripple-token-file PATH, or set "
                                  f"ripple.bearer_token / _env / _keyring)")
    if status >= 500 and status != 501:
        return Line("url", False, f"{shown} answers {status}: the receiver is up but failing; look at its log")
    return Line("url", True, f"{shown} answers (HTTP {status} to a GET; a ripple is a POST)")


def _script_lines(rcfg: RippleConfig, memory_url: str, probe: Probe) -> list:
    windows = claude_setup.is_windows(probe.platform)
    name, privileged = probe.whoami()
    run_as = (rcfg.run_as or "").strip()
    line, plan, home = _account_line(run_as, (name, privileged), windows, probe)
    lines = [line]
    mode = plan.mode if plan is not None else None
    argv = argv_of(rcfg, windows)
    exe = _command_line(lines, argv, plan, home, probe)
    if mode == "sudo" and exe and probe.no_new_privs():
        lines.append(Line("sudo", False, f"this service runs with no_new_privs (the systemd unit's "
                                         f"NoNewPrivileges=true), so sudo cannot start {exe} as {plan.user}: "
                                         f"remove that line from the unit, or leave ripple.run_as empty so the "
                                         f"wake-up runs as {name}"))
    elif mode == "sudo" and exe and probe.sudo_allows(plan.user, exe) is False:
        lines.append(Line("sudo", False, f"this service runs as {name}, not root, so it needs `sudo -n -u "
                                         f"{plan.user}` for {exe}, and sudo refuses without a password: add "
                                         f"a sudoers rule for it, or run the service as root or as {plan.user}"))
    if rcfg.stdin and mode == "windows-session":
        lines.append(Line("message", False, "a stdin ripple cannot be started in another user's session "
                                            "yet: put {message} in the command and turn ripple.stdin off"))
    elif rcfg.stdin:
        lines.append(Line("message", True, "the message goes on the command's stdin"))
    elif any("{message}" in a for a in argv):
        lines.append(Line("message", True, "the message goes in the command's {message} argument"))
    elif argv:
        lines.append(Line("message", False, "the command has no {message} and ripple.stdin is off, so the woken "
                                            "model never gets the message: add {message} to the command"))
    folder = _folder_line(lines, rcfg, mode, home, probe)
    if is_claude(argv):
        lines.extend(claude_lines(argv, folder, run_as if mode != "direct" else "", memory_url, probe))
    return lines


def _account_line(run_as: str, current: tuple, windows: bool, probe: Probe) -> tuple:
    """(its Line, the run-as plan, run_as's home): may run_as be used from here (and is it logged on)?"""
    from seren_sinew import runas

    try:
        plan = runas.plan(run_as, current=current, windows=windows)
    except runas.RunAsRefused as exc:
        return Line("run_as", False, str(exc)), None, None
    if plan.mode == "direct":
        how = ("run_as is empty, so" if not run_as else f"run_as {run_as} is this account, so")
        return Line("run_as", True, f"{how} the command runs as {plan.user}, the account running this"), plan, None
    exists = probe.account_exists(run_as)
    home = probe.home_of(run_as)
    if exists is False or (not windows and not home):
        line = Line("run_as", False, f"no such user on this box: {run_as}: set ripple.run_as (or "
                                     f"--ripple-run-as) to the account whose login `claude` uses")
    elif plan.mode != "windows-session":
        line = Line("run_as", True, f"{run_as} exists; this service runs as {current[0]}, so the command "
                                    f"starts through {plan.mode}")
    elif (on := probe.logged_on(run_as)) is False:
        line = Line("run_as", False, f"{run_as} is not logged on to this box, so a LocalSystem service has no "
                                     f"session to start the command in: log {run_as} on (a locked screen is fine; "
                                     f"signed out is not); the ripple runs next time they are")
    else:
        line = Line("run_as", True, f"{run_as} exists and is logged on: the command starts in their session"
                                    + ("" if on else " (not confirmed)"))
    return line, plan, home


def _folder_line(lines: list, rcfg: RippleConfig, mode: Optional[str], home: Optional[str], probe: Probe) -> str:
    """Appends the working directory's line; returns the folder the command starts in."""
    cwd = (rcfg.cwd or "").strip()
    if cwd and os.path.isdir(cwd):
        lines.append(Line("cwd", True, f"{cwd} exists"))
    elif cwd:
        lines.append(Line("cwd", False, f"{cwd} does not exist: set ripple.cwd to the project folder "
                                        f"(--ripple-claude DIR), or create it"))
    else:
        cwd = (home or "") if mode == "windows-session" else probe.cwd()
        lines.append(Line("cwd", True, f"not set: the command starts in {cwd or 'its account home'}"))
    return cwd


def _command_line(lines: list, argv: list, plan, home: Optional[str], probe: Probe) -> Optional[str]:
    """Is the command's program where its account will look for it? Appends its line; returns its path."""
    if not argv:
        lines.append(Line("command", False, "ripple.command is empty: give --ripple-claude DIR, or --ripple-command"))
        return None
    program, mode = argv[0], plan.mode if plan is not None else None
    if mode == "windows-session" and not os.path.isabs(program):
        lines.append(Line("command", True, f"'{program}' is looked up on {plan.user}'s session PATH when the "
                                           f"ripple starts, which cannot be read from here: --fire tries it"))
        return program
    dirs = [str(probe.environ.get("PATH") or probe.environ.get("Path") or "")]
    if mode in ("runuser", "sudo") and home:
        dirs = [os.path.join(home, ".local", "bin"), os.path.join(home, "bin"), *dirs]
    exe = shutil.which(program, path=os.pathsep.join(d for d in dirs if d))     # PATHEXT's endings on Windows
    who = "this account" if plan is None else _WHO.get(mode, "{}'s PATH").format(plan.user)
    if exe:
        lines.append(Line("command", True, f"'{program}' is {exe} on {who}"))
    else:
        install = ("install Claude Code for that account (npm install -g @anthropic-ai/claude-code) or give the "
                   "absolute path of claude as the command's first word" if is_claude(argv)
                   else "install it for that account, or give its absolute path in ripple.command")
        lines.append(Line("command", False, f"'{program}' is not on {who}: {install}"))
    return exe


def route(rcfg: RippleConfig, platform: str = sys.platform) -> str:
    kind = (rcfg.type or "").strip().lower()
    if kind == "endpoint":
        return f"POST {redact.url(rcfg.url) or '(no url)'}"
    if kind == "script":
        argv = argv_of(rcfg, claude_setup.is_windows(platform))
        who = f" as {rcfg.run_as}" if rcfg.run_as else ""
        where = f" in {rcfg.cwd}" if rcfg.cwd else ""
        return f"{argv[0] if argv else '(no command)'}{who}{where}"
    return "off"


def wakeup_view(rcfg: RippleConfig, lines: list) -> dict:
    """/status's `wakeup` (without the last ripple per event, which the status adds)."""
    kind = (rcfg.type or "").strip().lower() or "off"
    bad = [ln for ln in lines if not ln.ok]
    if kind == "off":
        ok, summary = None, "off: nothing wakes the main model (ripple.type is empty)"
    elif not bad:
        ok, summary = True, f"ok: {route(rcfg)} ({len(lines)} checks)"
    else:
        more = f" (and {len(bad) - 1} more: {', '.join(b.check for b in bad[1:])})" if len(bad) > 1 else ""
        ok, summary = False, f"would fail: {bad[0].check}: {bad[0].text}{more}"
    return {"ok": ok, "type": kind, "summary": summary, "lines": [dataclasses.asdict(ln) for ln in lines],
            "checked_at": time.time()}


def service_view(cfg) -> dict:
    return wakeup_view(cfg.ripple, checks(cfg.ripple, memory_url=cfg.memory.url))


def _log_dir(preferred: Path) -> tuple:
    """The state folder's ripple.log (private, as the service makes it) when it can be written, else a tmp one."""
    try:
        private.make_dir(preferred)
        private.roll(preferred / "ripple.log")          # before its offset is read: fire's roll finds it short
        os.close(private.open_append(preferred / "ripple.log"))
        return preferred, None
    except OSError:
        tmp = tempfile.mkdtemp(prefix="seren-ripple-check-")
        return Path(tmp), tmp


def fire(rcfg: RippleConfig, *, log_dir: Path, timeout: Optional[float] = None) -> Line:
    """One harmless wake-up through the real route (Ripple): exit code, time, output."""
    limit = float(rcfg.timeout_seconds if timeout is None else timeout)     # the child is killed at this, not before
    cfg = dataclasses.replace(rcfg, messages={FIRE_EVENT: FIRE_MESSAGE}, events=[FIRE_EVENT], timeout_seconds=limit)
    where, tmp = _log_dir(Path(log_dir))
    log = where / "ripple.log"
    offset = log.stat().st_size if log.exists() else 0
    ripple = Ripple(cfg, log_dir=where)
    started = time.monotonic()
    outcome = ripple.fire({"type": FIRE_EVENT, "event": FIRE_EVENT})
    try:
        if not outcome.get("ok"):
            what = outcome.get("error") or outcome.get("skipped") or "did not start"
            status = f" (HTTP {outcome['status']})" if "status" in outcome else ""
            return Line("fire", False, f"the wake-up did not go out{status}: {what}")
        if outcome.get("type") == "endpoint":
            return Line("fire", True, f"the receiver took the wake-up: HTTP {outcome.get('status')} in "
                                      f"{time.monotonic() - started:.1f} s")
        done = ripple.wait(FIRE_EVENT, limit + KILL_GRACE)     # the reaper kills it at `limit` and says so
        seconds = time.monotonic() - started
        if done is None or done.get("killed"):
            ripple.shutdown()
            return Line("fire", False, f"pid {outcome.get('pid')} did not finish within {limit:g} s and was "
                                       f"killed{_first_lines(log, offset)}")
        code, head = done.get("exit_code"), _first_lines(log, offset)
        text = f"pid {outcome.get('pid')} as {outcome.get('run_as')} exited {code} after {seconds:.1f} s{head}"
        if code == 0:
            return Line("fire", True, text)
        return Line("fire", False, text + " - see the output above, and ripple.log "
                                          f"({log if tmp is None else 'not kept'})")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _first_lines(log: Path, offset: int, n: int = OUTPUT_LINES) -> str:
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            text = f.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln.rstrip()[:LINE_CHARS] for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "; no output"
    more = f"\n        ... ({len(lines) - n} more line(s) in {log})" if len(lines) > n else ""
    return "; output:\n" + "\n".join("        " + ln for ln in lines[:n]) + more
