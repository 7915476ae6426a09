"""Wiring the ripple to Claude Code on this box: `--ripple-claude DIR` and `ripple-claude DIR`.

The family's rules (family-conventions 5.3): the MCP server names registered
for a project folder come from three places in Claude Code's settings, and
are unioned and sorted:

- the top-level ``mcpServers`` of ``~/.claude.json`` (user scope: every folder);
- ``projects["<folder>"].mcpServers`` there (local scope: that folder only),
  for the entry whose key is the folder after path normalisation, and case
  folding where the platform folds case;
- ``<folder>/.mcp.json`` -> ``mcpServers`` (project scope).

The ripple command pre-approves one server-wide rule per name
(``--allowedTools mcp__a,mcp__b``, each name as Claude Code writes it in tool
names: `tool_name`) because a headless ``claude -p`` cannot answer a
permission prompt, and runs in the folder because started anywhere
else it wakes without its local-scope servers.

Everything here is a plain function; the path rules take the platform as an
argument so that the Windows semantics are testable anywhere.
"""
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


# ---------------------------------------------------------------- path rules (pure)

def is_windows(platform: str) -> bool:
    return platform in ("win32", "cygwin", "nt") or platform.startswith("win")


def folds_case(platform: str) -> bool:
    """Does the platform's usual file system treat 'Proj' and 'proj' as one folder? Windows and macOS do."""
    return is_windows(platform) or platform == "darwin"


def normalise(path: str, platform: str) -> str:
    """The folder as a comparable string: separators, '.', '..' and doubled or trailing separators
    resolved the platform's way ('C:/x/' and 'C:\\\\x' are one folder on Windows). No case folding."""
    p = (path or "").strip()
    if not p:
        return ""
    if is_windows(platform):
        n = ntpath.normpath(p.replace("/", "\\"))
        drive, rest = ntpath.splitdrive(n)
        rest = rest.rstrip("\\")
        return drive + (rest or "\\")
    n = posixpath.normpath(p)
    if n.startswith("//"):          # POSIX keeps a leading '//'; Claude Code does not
        n = "/" + n.lstrip("/")
    return n


def project_key(path: str, platform: str) -> str:
    """normalise(), then case folded where the platform folds case."""
    n = normalise(path, platform)
    return n.casefold() if folds_case(platform) else n


def find_project(projects: Mapping, folder: str, platform: str) -> Optional[str]:
    """The key of `projects` that names `folder`: an exact match after normalisation first, then
    (where the platform folds case) a case-folded one. None when there is none."""
    if not isinstance(projects, Mapping) or not folder:
        return None
    want = normalise(folder, platform)
    keys = [k for k in projects if isinstance(k, str)]
    for k in keys:
        if normalise(k, platform) == want:
            return k
    if folds_case(platform):
        folded = want.casefold()
        for k in keys:
            if project_key(k, platform) == folded:
                return k
    return None


# ---------------------------------------------------------------- whose settings

def invoking_account(environ: Optional[Mapping] = None) -> str:
    """The account that runs this command, as the card fills run_as: $SUDO_USER (when sudo was used),
    then the login name (`id -un`), then $USERNAME on Windows."""
    env = os.environ if environ is None else environ
    sudo_user = (env.get("SUDO_USER") or "").strip()
    return sudo_user if sudo_user and sudo_user != "root" else _current_account(env)


def bare(name: str) -> str:
    """'DOMAIN\\\\alice', '.\\\\alice', 'alice@host' -> 'alice' (as seren_sinew.runas compares names)."""
    return (name or "").strip().split("\\")[-1].split("@")[0].lower()


def windows_profiles_dir(environ: Mapping) -> str:
    """Where Windows keeps the profiles (C:\\\\Users): the parent of %PUBLIC%."""
    public = (environ.get("PUBLIC") or "").strip()
    return ntpath.dirname(public.rstrip("\\/")) if public else "C:\\Users"


def home_of(user: str, environ: Optional[Mapping] = None) -> Optional[str]:
    """Another account's home folder (None when there is no such account)."""
    env = os.environ if environ is None else environ
    if os.name == "nt":
        return ntpath.join(windows_profiles_dir(env), bare(user))
    try:
        import pwd

        return pwd.getpwnam(bare(user)).pw_dir
    except (ImportError, KeyError):
        return None


def settings_path(explicit: Optional[str] = None, *, run_as: str = "", environ: Optional[Mapping] = None,
                  current: Optional[str] = None,
                  lookup_home: Optional[Callable[[str], Optional[str]]] = None) -> Path:
    """The ~/.claude.json to read: --claude-json, then $SEREN_CLAUDE_JSON, then run_as's own
    (when run_as is another account), then this account's ~/.claude.json."""
    env = os.environ if environ is None else environ
    if explicit:
        return Path(os.path.abspath(os.path.expanduser(explicit)))
    if (env.get(ENV_CLAUDE_JSON) or "").strip():
        return Path(os.path.abspath(os.path.expanduser(env[ENV_CLAUDE_JSON].strip())))
    me = current if current is not None else _current_account()
    if run_as and bare(run_as) != bare(me):
        home = (lookup_home or home_of)(run_as)
        if home:
            return Path(home) / ".claude.json"
    return Path(os.path.expanduser("~")) / ".claude.json"


def _current_account(environ: Optional[Mapping] = None) -> str:
    """This process's own account (not $SUDO_USER)."""
    env = os.environ if environ is None else environ
    if os.name == "nt":
        return (env.get("USERNAME") or "").strip()
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return (env.get("USER") or env.get("LOGNAME") or "").strip()


# ---------------------------------------------------------------- reading the three scopes

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


def _names(servers: object) -> list:
    return sorted(str(k) for k in servers) if isinstance(servers, dict) else []


@dataclass
class Registered:
    """The MCP servers Claude Code starts in one folder, by scope, and where they were read."""
    folder: str
    settings: str
    user: list = field(default_factory=list)
    local: list = field(default_factory=list)
    project: list = field(default_factory=list)
    project_key: Optional[str] = None          # the projects[...] key that matched, if any
    entries: dict = field(default_factory=dict)  # name -> its settings (url, command, args...)

    @property
    def names(self) -> list:
        return sorted(set(self.user) | set(self.local) | set(self.project))

    def scopes(self) -> str:
        bits = [f"{scope}: {', '.join(names)}" for scope, names in
                (("user", self.user), ("local", self.local), ("project", self.project)) if names]
        return "; ".join(bits) or "none"


def registered(folder: str, settings: Path, *, platform: Optional[str] = None,
               settings_data: Optional[dict] = None) -> Registered:
    """The servers registered for `folder` (which must exist) in `settings` and its .mcp.json.
    Raises ClaudeSetupError when the settings file is missing or unreadable."""
    platform = platform or sys.platform
    if settings_data is None:
        if not settings.is_file():
            raise ClaudeSetupError(
                f"no Claude Code settings at {settings}: run `claude` once in {folder} to create them, and "
                f"add the memory servers there with `cd {_quote(folder)} && claude mcp add <name> ...` "
                f"(or point --claude-json, or ${ENV_CLAUDE_JSON}, at the right ~/.claude.json)")
        settings_data = _read_json(settings, "Claude Code's settings")
    reg = Registered(folder=folder, settings=str(settings))
    _dict = lambda v: v if isinstance(v, dict) else {}  # noqa: E731
    top = _dict(settings_data.get("mcpServers"))
    projects = _dict(settings_data.get("projects"))
    reg.project_key = next((k for k in (find_project(projects, c, platform) for c in _candidates(folder))
                            if k is not None), None)
    local = _dict(_dict(projects.get(reg.project_key)).get("mcpServers")) if reg.project_key is not None else {}
    mcp_json = Path(folder) / ".mcp.json"
    shared = _dict(_read_json(mcp_json, "the project's MCP servers").get("mcpServers")) if mcp_json.is_file() else {}
    reg.user, reg.local, reg.project = _names(top), _names(local), _names(shared)
    entries = {**shared, **top, **local}        # user, then local over it; the project's only where neither has it
    reg.entries = {str(k): (v if isinstance(v, dict) else {}) for k, v in entries.items()}
    return reg


def _candidates(folder: str) -> list:
    """The folder as given (made absolute), then with its symlinks resolved: Claude Code keys a
    project by the working directory its process sees, which is the resolved one."""
    return list(dict.fromkeys((folder, os.path.realpath(folder))))


def _quote(path: str) -> str:
    return f'"{path}"' if any(c.isspace() for c in path) else path


# ---------------------------------------------------------------- the command

CLAUDE_AI_PREFIX = "claude.ai "
_NOT_IN_A_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str) -> str:
    """The server's name as Claude Code writes it in its tools' names (mcp__<this>__<tool>) and matches
    permission rules against: every character outside [A-Za-z0-9_-] becomes "_" ("seren memory local" ->
    "seren_memory_local"); for its claude.ai connectors ("claude.ai Gmail") runs of "_" are then squeezed to
    one and a leading or trailing one dropped ("claude_ai_Gmail"). This is Claude Code's own rule
    (normalizeNameForMCP in its services/mcp/normalization), as public accounts of its source give it."""
    name = _NOT_IN_A_TOOL_NAME.sub("_", str(server))
    if str(server).startswith(CLAUDE_AI_PREFIX):
        name = re.sub(r"_+", "_", name).strip("_")
    return name


def tool_names(servers: list) -> dict:
    """Claude Code's name -> the registered names it stands for (two names may come to one)."""
    out: dict = {}
    for s in sorted(set(servers)):
        out.setdefault(tool_name(s), []).append(s)
    return out


def allowed_tools(servers: list) -> str:
    """One server-wide rule per server, as one --allowedTools argument, each with the server named as
    Claude Code names it (a rule naming "seren memory local" would match none of its tools)."""
    return ",".join(f"mcp__{s}" for s in sorted(tool_names(servers)))


def command_for(servers: list) -> list:
    return [*BASE_COMMAND, "--allowedTools", allowed_tools(servers)]


@dataclass
class ClaudeRipple:
    folder: str
    servers: list
    registered: Registered

    @property
    def command(self) -> list:
        return command_for(self.servers)

    @property
    def cwd(self) -> str:
        return self.folder


def absolute_folder(folder: str) -> str:
    return os.path.abspath(os.path.expanduser((folder or "").strip()))


def build(folder: str, *, claude_json: Optional[str] = None, run_as: str = "",
          environ: Optional[Mapping] = None, platform: Optional[str] = None) -> ClaudeRipple:
    """The ripple command for waking Claude Code in `folder`, or ClaudeSetupError saying what to run."""
    if not (folder or "").strip():
        raise ClaudeSetupError("--ripple-claude needs a project folder: the folder you run `claude` in")
    where = absolute_folder(folder)
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
    return ClaudeRipple(folder=where, servers=reg.names, registered=reg)


def yaml_lines(cr: ClaudeRipple, indent: int = 0) -> list:
    """The two lines the card puts under `ripple:` (JSON, which is valid YAML), indented."""
    pad = " " * max(0, int(indent))
    return [f"{pad}command: {json.dumps(cr.command)}", f"{pad}cwd: {json.dumps(cr.cwd)}"]
