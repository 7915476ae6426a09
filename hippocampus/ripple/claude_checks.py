"""The checks of a `claude` ripple command: its pre-approved servers are registered for the folder in that
account's ~/.claude.json, and one of them is a Seren Memory server (asked, not judged by its name)."""
from __future__ import annotations

import ntpath
import os
import re
from typing import Optional
from urllib.parse import urlsplit, urlunsplit

from hippocampus import transport_words
from hippocampus.config import redact
from hippocampus.ripple import claude as claude_setup
from hippocampus.ripple.probe import CHECK_TIMEOUT, Line, Probe

SEREN_MEMORY = re.compile(r"seren[-_]memory", re.IGNORECASE)


def is_claude(argv: list) -> bool:
    program = argv[0] if argv else ""
    name = (ntpath if "\\" in program else os.path).basename(program).lower()
    return re.sub(r"\.(exe|cmd|bat|ps1)$", "", name) == "claude"


def allowed_servers(argv: list) -> Optional[list]:
    """The servers --allowedTools pre-approves, in order; None without an --allowedTools at all."""
    values, found = [], False
    for i, a in enumerate(argv):
        flag, eq, value = a.partition("=")
        if flag in ("--allowedTools", "--allowed-tools"):
            found = True
            values.extend([value] if eq else argv[i + 1:i + 2])
    if not found:
        return None
    names = (r[len("mcp__"):].split("__", 1)[0] for r in re.split(r"[,\s]+", " ".join(values))
             if r.startswith("mcp__"))
    return [n for n in dict.fromkeys(names) if n]


def health_urls(url: str) -> list:
    """Where the host of an MCP URL says what it is: /health beside the MCP route, then at the root."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    head, _, last = path.rpartition("/")
    beside = (head if last.lower() in ("mcp", "sse") else path) + "/health"
    return [urlunsplit((parts.scheme, parts.netloc, p, "", "")) for p in dict.fromkeys((beside, "/health"))]


def memory_shaped(body: object) -> bool:
    """SerenMemory's /health ({"ok": true, "ts": <seconds>, "features"?: [...]}), not this service's (no ts)."""
    if not isinstance(body, dict) or body.get("ok") is not True or "memory_reachable" in body:
        return False
    ts = body.get("ts")
    features = body.get("features", [])
    return isinstance(ts, (int, float)) and not isinstance(ts, bool) and isinstance(features, list)


def what_it_is(entry: dict, probe: Probe) -> tuple:
    """(is it SerenMemory, what it said); a stdio entry cannot be asked without starting it: its command."""
    url = str(entry.get("url") or "").strip()
    if url:
        shown, said = redact.url(url), ""
        for health in health_urls(url):
            try:
                status, body = probe.http_json(health, CHECK_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - any failure to connect is the answer
                did = transport_words.failed_predicate(exc, seconds=CHECK_TIMEOUT)[1]
                said = said or f"points at {shown}, which does not answer ({did})"
                continue
            if status == 200 and memory_shaped(body):
                return True, f"answers at {redact.url(health)} as Seren Memory"
            if isinstance(body, dict) and "memory_reachable" in body:
                return False, (f"points at {shown}, which answers as a seren-hippocampus (a sleep cycle, perhaps "
                               f"this one), not Seren Memory")
            said = said or (f"points at {shown}, whose {redact.url(health)} answers HTTP {status} but not as "
                            f"Seren Memory")
        return False, said
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    launched = " ".join(str(x) for x in [entry.get("command") or "", *args]).strip()
    if not launched:
        return False, "has neither a url nor a command"
    if SEREN_MEMORY.search(launched):
        return True, f"is started by `{launched[:120]}`"
    return False, f"is started by `{launched[:120]}`, which does not name seren-memory"


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
    named = claude_setup.tool_names(reg.names)      # Claude Code's name -> the registered name(s)
    cd = f"cd {folder} && " if folder else ""
    return [_servers_line(allowed, named, reg, folder, settings, cd, rebuild),
            _memory_line([a for a in allowed if a in named], named, reg, memory_url, probe, cd, rebuild)]


def _as_registered(tool: str, named: dict) -> str:
    """A server by its Claude Code name, with the registered name beside it when that differs."""
    regs = [r for r in named.get(tool, []) if r != tool]
    return f"{tool} (registered as {', '.join(repr(r) for r in regs)})" if regs else tool


def _servers_line(allowed: list, named: dict, reg, folder: str, settings, cd: str, rebuild: str) -> Line:
    missing = [s for s in allowed if s not in named]
    unapproved = [t for t in sorted(named) if t not in allowed]
    renamed = [t for t in unapproved if any(r != t for r in named[t])]
    if missing:
        them = "it" if len(missing) == 1 else "them"
        why = "".join(f"; {', '.join(repr(r) for r in named[t])} is named {t} in Claude Code's tool names, so its "
                      f"rule is mcp__{t}" for t in renamed)
        return Line("servers", False,
                    f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} pre-approved in --allowedTools "
                    f"but not registered for {folder} in {settings} (registered: {reg.scopes()}){why}: add {them} "
                    f"with `{cd}claude mcp add {missing[0]} ...`, or drop {them} by running `{rebuild}`")
    extra = (f"; registered but not pre-approved: {', '.join(_as_registered(t, named) for t in unapproved)} "
             f"(their tools would wait on a permission prompt)" if unapproved else "")
    return Line("servers", True, f"{', '.join(_as_registered(a, named) for a in allowed)} pre-approved and "
                                 f"registered for {folder} ({reg.scopes()}; in {settings}){extra}")


def _memory_line(present: list, named: dict, reg, memory_url: str, probe: Probe, cd: str, rebuild: str) -> Line:
    """Is one of the pre-approved, registered servers SerenMemory?"""
    found, others = [], []
    for tool in present:
        for name in named[tool]:
            ok, said = what_it_is(reg.entries.get(name, {}), probe)
            (found if ok else others).append(f"{_as_registered(tool, {tool: [name]})} {said}")
    if found:
        return Line("memory", True, "; ".join(found))
    url = redact.url((memory_url or "http://127.0.0.1:7420").rstrip("/") + "/mcp")
    heard = f": {'; '.join(others)}" if others else ""
    return Line("memory", False,
                f"none of the pre-approved, registered servers ({', '.join(present) or 'none'}) is a Seren Memory "
                f"server{heard}. So the woken model has no submit_brief or review_draft: register Memory for "
                f"that folder with `{cd}claude mcp add --transport http seren-memory {url}` (Memory running), "
                f"then run `{rebuild}`")
