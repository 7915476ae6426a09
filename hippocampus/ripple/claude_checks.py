"""The checks of a `claude` ripple command: the servers its --allowedTools pre-approves are registered for
the folder in that account's ~/.claude.json, and one of them is a Seren Memory server."""
from __future__ import annotations

import ntpath
import os
import re
from typing import Optional
from urllib.parse import urlsplit

from hippocampus.config import redact
from hippocampus.ripple import claude as claude_setup
from hippocampus.ripple.probe import Line, Probe

MEMORY_NAME = re.compile(r"(^|[-_.])memory$", re.IGNORECASE)


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



def claude_lines(argv: list, folder: str, other_account: str, memory_url: str, probe: Probe) -> list:
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

