"""Would a wake-up work? The brief's preconditions for the configured ripple, one line each.

`seren-hippocampus check-ripple` prints these lines (and, with --fire, sends
one harmless wake-up through the real route); the service computes the same
lines off the request path - at start-up and after each ripple - and
publishes them on the board, where /status shows them as ``wakeup``.

For a script ripple: the account (run_as exists, may be used from here, and
for a LocalSystem service is logged on), the command on that account's PATH,
where the message goes, the working directory, and for a ``claude`` command
the servers its --allowedTools pre-approves registered for that folder in
that account's ~/.claude.json, one of them a Seren Memory server. For an
endpoint: that the URL answers.

Every check is a plain function over a `Probe` (the world: accounts, PATH,
sessions, HTTP), so each can be tested by handing it a different world. The
Windows-only parts (an account's existence, a logged-on session) are thin
functions of their own.
"""
from __future__ import annotations

import dataclasses
import ntpath
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional
from urllib.parse import urlsplit

from hippocampus.ripple import claude as claude_setup
from hippocampus.config import redact
from hippocampus.config import RippleConfig

FIRE_EVENT = "wake_check"
CHECK_TIMEOUT = 5.0
OUTPUT_LINES = 5
LINE_CHARS = 200
MEMORY_NAME = re.compile(r"(^|[-_.])memory$", re.IGNORECASE)


@dataclass
class Line:
    check: str
    ok: bool
    text: str

    def render(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.check}: {self.text}"

    def as_dict(self) -> dict:
        return {"check": self.check, "ok": self.ok, "text": self.text}


# ---------------------------------------------------------------- the world, injectable

def _http_get(url: str, headers: dict, timeout: float) -> int:
    import requests

    return requests.get(url, headers=headers, timeout=timeout, allow_redirects=False).status_code


def _account_exists(user: str) -> Optional[bool]:
    if os.name == "nt":
        return windows_account_exists(user)
    try:
        import pwd

        pwd.getpwnam(claude_setup.bare(user))
        return True
    except KeyError:
        return False


def _sudo_allows(user: str, exe: str) -> Optional[bool]:
    """Would `sudo -n -u user exe` run without a password? (`sudo -l` asks without running it.)"""
    try:
        r = subprocess.run(["sudo", "-n", "-l", "-u", user, exe], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=CHECK_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def _whoami() -> tuple:
    from seren_sinew import runas

    return runas.whoami()


# ---------------------------------------------------------------- Windows, thin

def windows_account_exists(user: str) -> Optional[bool]:  # pragma: no cover - Windows only
    """Is `user` an account this box knows (LookupAccountNameW)? None when it cannot be asked."""
    if os.name != "nt":
        return None
    try:
        import ctypes
        from ctypes import wintypes as w

        sid_size, dom_size, use = w.DWORD(0), w.DWORD(0), w.DWORD(0)
        ctypes.windll.advapi32.LookupAccountNameW(None, user, None, ctypes.byref(sid_size), None,
                                                  ctypes.byref(dom_size), ctypes.byref(use))
        return sid_size.value > 0
    except Exception:  # noqa: BLE001 - a thin probe: unknown, not an error
        return None


def windows_logged_on(user: str) -> Optional[bool]:  # pragma: no cover - Windows only
    """Does `user` have a session on this box (WTSEnumerateSessions + WTSUserName), the session a
    LocalSystem service borrows? None when it cannot be asked (not Windows)."""
    if os.name != "nt":
        return None
    try:
        import ctypes
        from ctypes import wintypes as w

        wtsapi = ctypes.windll.wtsapi32

        class SESSION_INFO(ctypes.Structure):
            _fields_ = [("SessionId", w.DWORD), ("pWinStationName", w.LPWSTR), ("State", ctypes.c_int)]

        sessions, count = ctypes.POINTER(SESSION_INFO)(), w.DWORD()
        if not wtsapi.WTSEnumerateSessionsW(None, 0, 1, ctypes.byref(sessions), ctypes.byref(count)):
            return None
        try:
            for i in range(count.value):
                buf, n = w.LPWSTR(), w.DWORD()
                if wtsapi.WTSQuerySessionInformationW(None, sessions[i].SessionId, 5, ctypes.byref(buf),
                                                      ctypes.byref(n)):
                    name = buf.value or ""
                    wtsapi.WTSFreeMemory(buf)
                    if name and claude_setup.bare(name) == claude_setup.bare(user):
                        return True
        finally:
            wtsapi.WTSFreeMemory(sessions)
        return False
    except Exception:  # noqa: BLE001 - a thin probe: unknown, not an error
        return None


@dataclass
class Probe:
    """Everything the checks look at outside the config."""
    whoami: Callable[[], tuple] = _whoami
    environ: Mapping = field(default_factory=lambda: os.environ)
    platform: str = sys.platform
    cwd: Callable[[], str] = os.getcwd
    home_of: Callable[[str], Optional[str]] = claude_setup.home_of
    account_exists: Callable[[str], Optional[bool]] = _account_exists
    logged_on: Callable[[str], Optional[bool]] = windows_logged_on      # a Windows session
    sudo_allows: Callable[[str, str], Optional[bool]] = _sudo_allows
    http_get: Callable[[str, dict, float], int] = _http_get


# ---------------------------------------------------------------- helpers (pure)

def argv_of(rcfg: RippleConfig, platform: str) -> list:
    import shlex

    command = rcfg.command
    if isinstance(command, str):
        command = shlex.split(command, posix=not claude_setup.is_windows(platform))
    return [str(p) for p in (command or [])]


def is_claude(argv: list) -> bool:
    if not argv:
        return False
    name = ntpath.basename(argv[0]).lower() if "\\" in argv[0] else os.path.basename(argv[0]).lower()
    return re.sub(r"\.(exe|cmd|bat|ps1)$", "", name) == "claude"


def allowed_servers(argv: list) -> Optional[list]:
    """The server names the --allowedTools rules pre-approve (mcp__<server> or mcp__<server>__<tool>),
    in order, or None when the command has no --allowedTools at all."""
    values, found = [], False
    for i, a in enumerate(argv):
        for flag in ("--allowedTools", "--allowed-tools"):
            if a == flag:
                found = True
                values.extend(argv[i + 1:i + 2])
            elif a.startswith(flag + "="):
                found = True
                values.append(a.split("=", 1)[1])
    if not found:
        return None
    out: list = []
    for v in values:
        for rule in re.split(r"[,\s]+", v):
            if rule.startswith("mcp__"):
                name = rule[len("mcp__"):].split("__", 1)[0]
                if name and name not in out:
                    out.append(name)
    return out


def find_program(program: str, dirs: list, exts: Optional[list] = None) -> Optional[str]:
    """`program` in `dirs` (with PATHEXT endings on Windows); an absolute path must be a file."""
    if os.path.isabs(program) or os.sep in program or (os.altsep and os.altsep in program):
        return program if os.path.isfile(program) else None
    for d in dirs:
        if not d:
            continue
        for ext in [""] + list(exts or []):
            cand = os.path.join(d, program + ext)
            if os.path.isfile(cand) and (exts or os.access(cand, os.X_OK)):
                return cand
    return None


def is_memory_server(name: str, entry: dict, memory_url: str = "") -> bool:
    """A Seren Memory MCP server: named like seren-memory, or pointing at this service's Memory, or
    started from the seren-memory package."""
    if MEMORY_NAME.search(name or ""):
        return True
    url = str(entry.get("url") or "")
    if url and memory_url:
        a, b = urlsplit(url), urlsplit(memory_url)
        if a.hostname and a.hostname == b.hostname and (a.port or 0) == (b.port or 0):
            return True
    launched = " ".join(str(x) for x in [entry.get("command") or "", *(entry.get("args") or [])]).lower()
    return "seren-memory" in launched or "seren_memory" in launched


# ---------------------------------------------------------------- the checks

def checks(rcfg: RippleConfig, *, memory_url: str = "", probe: Optional[Probe] = None) -> list:
    """One Line per precondition of the configured ripple."""
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
    headers = {}
    try:
        bearer = rcfg.resolve_bearer()
    except Exception:  # noqa: BLE001 - a pointer that cannot be read: no bearer
        bearer = ""
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    try:
        status = probe.http_get(url, headers, CHECK_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the answer
        url = redact.url(url)
        return Line("url", False, f"{url} does not answer ({type(exc).__name__}: {redact.text(str(exc))}): "
                                  f"start the receiver "
                                  f"(its Observatory or Lodestar), or fix ripple.url")
    url = redact.url(url)               # shown: its user:password@ and query values hidden
    if status == 404:
        return Line("url", False, f"{url} answers 404, so there is no ripple route at that path: point "
                                  f"ripple.url at the receiver's ripple route (/api/v1/system/ripple)")
    if status in (401, 403):
        return Line("url", False, f"{url} answers {status}: it wants a bearer this service does not send "
                                  f"(give --ripple-token, or set ripple.bearer_token / _env / _keyring)")
    if status >= 500 and status != 501:
        return Line("url", False, f"{url} answers {status}: the receiver is up but failing; look at its log")
    return Line("url", True, f"{url} answers (HTTP {status} to a GET; a ripple is a POST)")


def _script_lines(rcfg: RippleConfig, memory_url: str, probe: Probe) -> list:
    lines: list = []
    windows = claude_setup.is_windows(probe.platform)
    name, privileged = probe.whoami()
    run_as = (rcfg.run_as or "").strip()
    plan, home = _account_lines(lines, run_as, (name, privileged), windows, probe)
    argv = argv_of(rcfg, probe.platform)
    exe = _command_line(lines, argv, plan, home, windows, probe)
    _sudo_line(lines, plan, exe, name, probe)
    _message_line(lines, rcfg, argv, plan)
    folder = _folder_line(lines, rcfg, plan, home, probe)
    if is_claude(argv):
        lines.extend(_claude_lines(argv, folder, run_as if plan is None or plan.mode != "direct" else "",
                                   memory_url, probe))
    return lines


def _account_lines(lines: list, run_as: str, current: tuple, windows: bool, probe: Probe) -> tuple:
    """The account: may run_as be used from here? Appends its line; returns (the run-as plan, its home)."""
    from seren_sinew import runas

    try:
        plan = runas.plan(run_as, current=current, windows=windows)
    except runas.RunAsRefused as exc:
        lines.append(Line("run_as", False, str(exc)))
        return None, None
    if plan.mode == "direct":
        how = ("run_as is empty, so" if not run_as else f"run_as {run_as} is this account, so")
        lines.append(Line("run_as", True, f"{how} the command runs as {plan.user}, the account running this"))
        return plan, None
    exists = probe.account_exists(run_as)
    home = probe.home_of(run_as)
    if exists is False or (not windows and not home):
        lines.append(Line("run_as", False, f"no such user on this box: {run_as}: set ripple.run_as (or "
                                           f"--ripple-run-as) to the account whose login `claude` uses"))
    elif plan.mode == "windows-session":
        lines.append(_session_line(run_as, probe))
    else:
        lines.append(Line("run_as", True, f"{run_as} exists; this service runs as {current[0]}, so the command "
                                          f"starts through {plan.mode}"))
    return plan, home


def _session_line(run_as: str, probe: Probe) -> Line:
    """A LocalSystem service starts the command in run_as's session: is there one?"""
    on = probe.logged_on(run_as)
    if on is False:
        return Line("run_as", False, f"{run_as} is not logged on to this box, so a LocalSystem "
                                     f"service has no session to start the command in: log "
                                     f"{run_as} on (a locked screen is fine; signed out is "
                                     f"not); the ripple runs next time they are")
    return Line("run_as", True, f"{run_as} exists and is logged on: the command starts in "
                                f"their session" + ("" if on else " (not confirmed)"))


def _sudo_line(lines: list, plan, exe: Optional[str], name: str, probe: Probe) -> None:
    """Through sudo: would `sudo -n` let this service start the command?"""
    if plan is not None and plan.mode == "sudo" and exe:
        if probe.sudo_allows(plan.user, exe) is False:
            lines.append(Line("sudo", False, f"this service runs as {name}, not root, so it needs `sudo -n -u "
                                             f"{plan.user}` for {exe}, and sudo refuses without a password: add "
                                             f"a sudoers rule for it, or run the service as root or as "
                                             f"{plan.user}"))


def _message_line(lines: list, rcfg: RippleConfig, argv: list, plan) -> None:
    """Where the message goes: stdin, the {message} argument, or nowhere."""
    if rcfg.stdin:
        if plan is not None and plan.mode == "windows-session":
            lines.append(Line("message", False, "a stdin ripple cannot be started in another user's session "
                                                "yet: put {message} in the command and turn ripple.stdin off"))
        else:
            lines.append(Line("message", True, "the message goes on the command's stdin"))
    elif any("{message}" in a for a in argv):
        lines.append(Line("message", True, "the message goes in the command's {message} argument"))
    elif argv:
        lines.append(Line("message", False, "the command has no {message} and ripple.stdin is off, so the woken "
                                            "model never gets the message: add {message} to the command"))


def _folder_line(lines: list, rcfg: RippleConfig, plan, home: Optional[str], probe: Probe) -> str:
    """The working directory: appends its line; returns the folder the command starts in."""
    cwd = (rcfg.cwd or "").strip()
    if cwd:
        if os.path.isdir(cwd):
            lines.append(Line("cwd", True, f"{cwd} exists"))
        else:
            lines.append(Line("cwd", False, f"{cwd} does not exist: set ripple.cwd to the project folder "
                                            f"(--ripple-claude DIR), or create it"))
        return cwd
    if plan is not None and plan.mode == "windows-session":
        folder = home or ""
    else:
        folder = probe.cwd()
    lines.append(Line("cwd", True, f"not set: the command starts in {folder or 'its account home'}"))
    return folder


def _command_line(lines: list, argv: list, plan, home: Optional[str], windows: bool, probe: Probe) -> Optional[str]:
    if not argv:
        lines.append(Line("command", False, "ripple.command is empty: give --ripple-claude DIR, or "
                                            "--ripple-command"))
        return None
    program = argv[0]
    install = ("install Claude Code for that account (npm install -g @anthropic-ai/claude-code) or give the "
               "absolute path of claude as the command's first word" if is_claude(argv)
               else "install it for that account, or give its absolute path in ripple.command")
    path = str(probe.environ.get("PATH") or probe.environ.get("Path") or "")
    exts = ([e.lower() for e in str(probe.environ.get("PATHEXT") or ".EXE;.CMD;.BAT").split(";") if e]
            if windows else None)
    if plan is None:
        exe = find_program(program, path.split(os.pathsep), exts)
        who = "this account"
    elif plan.mode == "windows-session":
        if os.path.isabs(program):
            exe = program if os.path.isfile(program) else None
        else:
            lines.append(Line("command", True, f"'{program}' is looked up on {plan.user}'s session PATH when the "
                                               f"ripple starts, which cannot be read from here: --fire tries it"))
            return program
        who = f"{plan.user}'s session"
    elif plan.mode in ("runuser", "sudo"):
        dirs = ([os.path.join(home, ".local", "bin"), os.path.join(home, "bin")] if home else []) \
            + path.split(os.pathsep)
        exe = find_program(program, dirs, exts)
        who = f"{plan.user}'s PATH (~/.local/bin, ~/bin, then the service's PATH)"
    else:
        exe = find_program(program, path.split(os.pathsep), exts) or shutil.which(program, path=path or None)
        who = f"{plan.user}'s PATH"
    if exe:
        lines.append(Line("command", True, f"'{program}' is {exe} on {who}"))
    else:
        lines.append(Line("command", False, f"'{program}' is not on {who}: {install}"))
    return exe


def _claude_lines(argv: list, folder: str, other_account: str, memory_url: str, probe: Probe) -> list:
    allowed = allowed_servers(argv)
    rebuild = f"seren-hippocampus ripple-claude {folder}" if folder else "seren-hippocampus ripple-claude DIR"
    if not allowed:
        why = "no --allowedTools" if allowed is None else "no mcp__ rule in --allowedTools"
        return [Line("servers", False, f"the claude command pre-approves no MCP server ({why}): a headless "
                                       f"claude -p cannot answer a permission prompt, so submit_brief would "
                                       f"stall; give --ripple-claude DIR (or run `{rebuild}`) for the command")]
    settings = claude_setup.settings_path(None, run_as=other_account, environ=probe.environ,
                                          current=probe.whoami()[0], lookup_home=probe.home_of)
    try:
        reg = claude_setup.registered(folder, settings, platform=probe.platform)
    except claude_setup.ClaudeSetupError as exc:
        return [Line("servers", False, str(exc))]
    names = set(reg.names)
    missing = [s for s in allowed if s not in names]
    cd = f"cd {folder} && " if folder else ""
    if missing:
        servers = Line("servers", False,
                       f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} pre-approved in "
                       f"--allowedTools but not registered for {folder} in {settings} (registered: "
                       f"{reg.scopes()}): add {'it' if len(missing) == 1 else 'them'} with `{cd}claude mcp add "
                       f"{missing[0]} ...`, or drop {'it' if len(missing) == 1 else 'them'} by running `{rebuild}`")
    else:
        unapproved = sorted(names - set(allowed))
        extra = (f"; registered but not pre-approved: {', '.join(unapproved)} (their tools would wait on a "
                 f"permission prompt)" if unapproved else "")
        servers = Line("servers", True, f"{', '.join(allowed)} pre-approved and registered for {folder} "
                                        f"({reg.scopes()}; in {settings}){extra}")
    present = [s for s in allowed if s in names]
    mem = [s for s in present if is_memory_server(s, reg.entries.get(s, {}), memory_url)]
    if mem:
        memory = Line("memory", True, f"{', '.join(mem)} {'is a' if len(mem) == 1 else 'are'} Seren Memory "
                                      f"server{'' if len(mem) == 1 else 's'}")
    else:
        url = redact.url((memory_url or "http://127.0.0.1:7420").rstrip("/") + "/mcp")
        memory = Line("memory", False,
                      f"none of the pre-approved, registered servers ({', '.join(present) or 'none'}) is a Seren "
                      f"Memory server, so the woken model has no submit_brief or review_draft: register Memory "
                      f"for that folder with `{cd}claude mcp add --transport http seren-memory {url}`, then run "
                      f"`{rebuild}`")
    return [servers, memory]


# ---------------------------------------------------------------- the summary /status shows

def route(rcfg: RippleConfig, platform: str = sys.platform) -> str:
    kind = (rcfg.type or "").strip().lower()
    if kind == "endpoint":
        return f"POST {redact.url(rcfg.url) or '(no url)'}"
    if kind == "script":
        argv = argv_of(rcfg, platform)
        who = f" as {rcfg.run_as}" if rcfg.run_as else ""
        where = f" in {rcfg.cwd}" if rcfg.cwd else ""
        return f"{argv[0] if argv else '(no command)'}{who}{where}"
    return "off"


def wakeup_view(rcfg: RippleConfig, lines: list, *, platform: str = sys.platform,
                checked_at: Optional[float] = None) -> dict:
    """What /status shows as `wakeup` (without the last ripple per event, which the status adds)."""
    kind = (rcfg.type or "").strip().lower() or "off"
    bad = [ln for ln in lines if not ln.ok]
    if kind == "off":
        ok, summary = None, "off: nothing wakes the main model (ripple.type is empty)"
    elif not bad:
        ok, summary = True, f"ok: {route(rcfg, platform)} ({len(lines)} checks)"
    else:
        ok = False
        summary = f"would fail: {bad[0].check}: {bad[0].text}"
        if len(bad) > 1:
            summary += f" (and {len(bad) - 1} more: {', '.join(b.check for b in bad[1:])})"
    return {"ok": ok, "type": kind, "summary": summary, "lines": [ln.as_dict() for ln in lines],
            "checked_at": time.time() if checked_at is None else checked_at}


class WakeupWatch:
    """Runs the checks in the background when asked (at start-up, after each ripple) and publishes the
    view; never on a request's thread. One run at a time; a request during a run runs it once more."""

    def __init__(self, compute: Callable[[], dict], publish: Callable[[dict], None]) -> None:
        self.compute, self.publish = compute, publish
        self._lock = threading.Lock()
        self._running = False
        self._again = False

    def request(self) -> None:
        with self._lock:
            if self._running:
                self._again = True
                return
            self._running = True
        threading.Thread(target=self._run, name="wakeup-check", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                view = self.compute()
            except Exception as exc:  # noqa: BLE001 - the check itself failing is shown, never raised
                view = {"ok": None, "summary": f"the wake-up check failed: {type(exc).__name__}: {exc}",
                        "lines": [], "checked_at": time.time()}
            try:
                self.publish(view)
            except Exception:  # noqa: BLE001 - nowhere to publish (the service is stopping)
                pass
            with self._lock:
                if not self._again:
                    self._running = False
                    return
                self._again = False


def service_view(cfg) -> dict:
    """The wakeup view for a whole Config, as the service computes it."""
    return wakeup_view(cfg.ripple, checks(cfg.ripple, memory_url=cfg.memory.url))


# ---------------------------------------------------------------- --fire

def fire_message() -> str:
    from hippocampus.ripple.fire import WOKEN

    return (f"{WOKEN}\n\nThis is only a wake-up check (seren-hippocampus check-ripple --fire), not a task: "
            f"reply OK; nothing to do. Do not call any tools.")


def _log_dir(preferred: Path) -> tuple:
    """The state folder's ripple.log when it can be appended to, else a temporary folder."""
    try:
        preferred.mkdir(parents=True, exist_ok=True)
        with open(preferred / "ripple.log", "ab"):
            pass
        return preferred, None
    except OSError:
        tmp = tempfile.mkdtemp(prefix="seren-ripple-check-")
        return Path(tmp), tmp


def fire(rcfg: RippleConfig, *, log_dir: Path, timeout: Optional[float] = None) -> Line:
    """One harmless wake-up through the real route (hippocampus.ripple.Ripple): exit code, time, output."""
    from hippocampus.ripple.fire import Ripple

    cfg = dataclasses.replace(rcfg, messages={FIRE_EVENT: fire_message()}, events=[FIRE_EVENT])
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
        limit = float(cfg.timeout_seconds if timeout is None else timeout)
        done = ripple.wait(FIRE_EVENT, limit)
        seconds = time.monotonic() - started
        if done is None:
            ripple.shutdown()
            head = _first_lines(log, offset)
            return Line("fire", False, f"pid {outcome.get('pid')} did not finish within {limit:g} s and was "
                                       f"killed{head}")
        code = done.get("exit_code")
        head = _first_lines(log, offset)
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
