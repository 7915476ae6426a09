"""Wiring the ripple to Claude Code on this box: `--ripple-claude DIR` and `ripple-claude DIR`.

A folder's MCP servers are the union of three scopes: user and local (``~/.claude.json``) and project
(``<folder>/.mcp.json``). The command pre-approves each (a headless ``claude -p`` cannot answer a permission
prompt) and runs in the folder (started elsewhere it wakes without its local servers)."""
from __future__ import annotations

import json
import ntpath
import os
import posixpath
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

ENV_CLAUDE_JSON = "SEREN_CLAUDE_JSON"
BASE_COMMAND = ["claude", "-p", "{message}"]
REFUSED_TYPE = ("--ripple-claude wakes Claude Code on THIS box, so it implies --ripple script; for another "
                "box point --ripple endpoint at its Observatory or Lodestar and give that card --ripple-claude")


class ClaudeSetupError(ValueError):
    """What stops the command being built; the CLI prints it and exits 2."""


def is_windows(platform: str) -> bool:
    return platform in ("win32", "cygwin", "nt") or platform.startswith("win")


def folds_case(platform: str) -> bool:
    return is_windows(platform) or platform == "darwin"


def normalise(path: str, platform: str) -> str:
    """The folder as a comparable string, resolved the platform's way ('C:/x/' is 'C:\\\\x' on Windows)."""
    p = (path or "").strip()
    if not p:
        return ""
    if is_windows(platform):
        drive, rest = ntpath.splitdrive(ntpath.normpath(p.replace("/", "\\")))
        return drive + (rest.rstrip("\\") or "\\")
    n = posixpath.normpath(p)
    return "/" + n.lstrip("/") if n.startswith("//") else n     # POSIX keeps a leading '//'; Claude Code does not


def project_key(path: str, platform: str) -> str:
    n = normalise(path, platform)
    return n.casefold() if folds_case(platform) else n


def find_project(projects: Mapping, folder: str, platform: str) -> Optional[str]:
    """The key of `projects` naming `folder`: an exact match after normalisation, else a case-folded one."""
    if not isinstance(projects, Mapping) or not folder:
        return None
    keys = [k for k in projects if isinstance(k, str)]
    return next((k for same in (normalise, project_key) for k in keys if same(k, platform) == same(folder, platform)),
                None)


def invoking_account(environ: Mapping = os.environ) -> str:
    """The account that runs this command: $SUDO_USER, then the login name, then $USERNAME on Windows."""
    sudo_user = (environ.get("SUDO_USER") or "").strip()
    return sudo_user if sudo_user and sudo_user != "root" else _current_account(environ)


def bare(name: str) -> str:
    """'DOMAIN\\\\alice', '.\\\\alice', 'alice@host' -> 'alice' (as seren_sinew.runas compares names)."""
    return (name or "").strip().split("\\")[-1].split("@")[0].lower()


def home_of(user: str, environ: Mapping = os.environ) -> Optional[str]:
    """Another account's home folder, None when there is no such account (Windows: under %PUBLIC%'s parent)."""
    if os.name == "nt":
        public = (environ.get("PUBLIC") or "").strip()
        return ntpath.join(ntpath.dirname(public.rstrip("\\/")) if public else "C:\\Users", bare(user))
    try:
        import pwd

        return pwd.getpwnam(bare(user)).pw_dir
    except (ImportError, KeyError):
        return None


def settings_path(explicit: Optional[str] = None, *, run_as: str = "", environ: Mapping = os.environ,
                  current: Optional[str] = None,
                  lookup_home: Optional[Callable[[str], Optional[str]]] = None) -> Path:
    """The ~/.claude.json to read: --claude-json, $SEREN_CLAUDE_JSON, run_as's own, then this account's."""
    given = explicit or (environ.get(ENV_CLAUDE_JSON) or "").strip()
    if given:
        return Path(os.path.abspath(os.path.expanduser(given)))
    me = current if current is not None else _current_account()
    home = (lookup_home or home_of)(run_as) if run_as and bare(run_as) != bare(me) else None
    return Path(home or os.path.expanduser("~")) / ".claude.json"


def whoami() -> tuple:
    """(this process's account, privileged?); seren_sinew is imported late: it pulls in starlette."""
    from seren_sinew import runas

    return runas.whoami()


def _current_account(environ: Mapping = os.environ) -> str:
    if os.name == "nt":
        return (environ.get("USERNAME") or "").strip()
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return (environ.get("USER") or environ.get("LOGNAME") or "").strip()


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise ClaudeSetupError(f"{path} ({what}) is not valid JSON ({exc}): fix it, or point --claude-json "
                               f"at the right file") from None
    except OSError as exc:
        raise ClaudeSetupError(f"{path} ({what}) could not be read ({exc.strerror or exc}): make it "
                               f"readable by this account, or point --claude-json at a copy") from None
    return data if isinstance(data, dict) else {}


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


@dataclass
class Registered:
    """The MCP servers Claude Code starts in one folder, by scope, and where they were read."""
    folder: str
    settings: str
    user: list = field(default_factory=list)
    local: list = field(default_factory=list)
    project: list = field(default_factory=list)
    entries: dict = field(default_factory=dict)  # name -> its settings

    @property
    def names(self) -> list:
        return sorted(set(self.user) | set(self.local) | set(self.project))

    def scopes(self) -> str:
        bits = [f"{scope}: {', '.join(names)}" for scope, names in
                (("user", self.user), ("local", self.local), ("project", self.project)) if names]
        return "; ".join(bits) or "none"


def registered(folder: str, settings: Path, *, platform: str = sys.platform) -> Registered:
    """The servers registered for `folder` (which must exist) in `settings` and its .mcp.json."""
    if not settings.is_file():
        raise ClaudeSetupError(
            f"no Claude Code settings at {settings}: run `claude` once in {folder} to create them, and "
            f"add the memory servers there with `cd {_quote(folder)} && claude mcp add <name> ...` "
            f"(or point --claude-json, or ${ENV_CLAUDE_JSON}, at the right ~/.claude.json)")
    settings_data = _read_json(settings, "Claude Code's settings")
    top, projects = _dict(settings_data.get("mcpServers")), _dict(settings_data.get("projects"))
    # Claude Code keys a project by the working directory its process sees: the symlinks resolved
    key = next((k for k in (find_project(projects, c, platform)
                            for c in dict.fromkeys((folder, os.path.realpath(folder)))) if k is not None), None)
    local = _dict(_dict(projects.get(key)).get("mcpServers"))
    mcp_json = Path(folder) / ".mcp.json"
    shared = _dict(_read_json(mcp_json, "the project's MCP servers").get("mcpServers")) if mcp_json.is_file() else {}
    entries = {**shared, **top, **local}        # user, then local over it; the project's only where neither has it
    return Registered(folder=folder, settings=str(settings), user=sorted(map(str, top)),
                      local=sorted(map(str, local)), project=sorted(map(str, shared)),
                      entries={str(k): _dict(v) for k, v in entries.items()})


def _quote(path: str) -> str:
    return f'"{path}"' if any(c.isspace() for c in path) else path


def tool_name(server: str) -> str:
    """The server's name as Claude Code matches permission rules against (its normalizeNameForMCP)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(server))
    return re.sub(r"_+", "_", name).strip("_") if str(server).startswith("claude.ai ") else name


def tool_names(servers: list) -> dict:
    """Claude Code's name -> the registered names it stands for (two names may come to one)."""
    out: dict = {}
    for s in sorted(set(servers)):
        out.setdefault(tool_name(s), []).append(s)
    return out


def command_for(servers: list) -> list:
    """The ripple command: one server-wide rule per server, each named as Claude Code names it."""
    return [*BASE_COMMAND, "--allowedTools", ",".join(f"mcp__{s}" for s in sorted(tool_names(servers)))]


@dataclass
class ClaudeRipple:
    cwd: str
    servers: list
    registered: Registered
    command: list


def build(folder: str, *, claude_json: Optional[str] = None, run_as: str = "",
          environ: Mapping = os.environ, platform: str = sys.platform) -> ClaudeRipple:
    """The ripple command for waking Claude Code in `folder`, or ClaudeSetupError saying what to run."""
    if not (folder or "").strip():
        raise ClaudeSetupError("--ripple-claude needs a project folder: the folder you run `claude` in")
    where = os.path.abspath(os.path.expanduser(folder.strip()))
    if not os.path.isdir(where):
        raise ClaudeSetupError(
            f"no such project folder: {where}. Give --ripple-claude the folder you run `claude` in, the one "
            f"whose memory servers you added with `claude mcp add` (or create it and add them there)")
    path = settings_path(claude_json, run_as=run_as, environ=environ)
    reg = registered(where, path, platform=platform)
    if not reg.names:
        raise ClaudeSetupError(
            f"no MCP servers are registered for {where}: none at user scope or for this folder in {path}, "
            f"and no {os.path.join(where, '.mcp.json')}. Add them in that folder with "
            f"`cd {_quote(where)} && claude mcp add <name> ...` (the Seren Memory server at least), "
            f"then run this again")
    return ClaudeRipple(cwd=where, servers=reg.names, registered=reg, command=command_for(reg.names))


def yaml_lines(cr: ClaudeRipple, indent: int = 0) -> list:
    """The two lines the card puts under `ripple:` (JSON, which is valid YAML), indented."""
    pad = " " * max(0, int(indent))
    return [f"{pad}command: {json.dumps(cr.command)}", f"{pad}cwd: {json.dumps(cr.cwd)}"]
