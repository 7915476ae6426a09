"""check-config's probes: what the config names that can be reached from here, tried once each, so a config
that would fail at bedtime is named now. Each failure is a warning with its fix; each success a `# ` line.

A managed model is down between sleeps by design, so its server binary and model file are looked at instead
of its URL; a script ripple's account and command are check-ripple's own lines (hippocampus/ripple/check.py).
"""
from __future__ import annotations

import os
import shutil
from typing import Optional

from hippocampus.config import redact

MEMORY_SECONDS = 5.0        # a probe waits this long at most for Memory (the model's read has its own 3 s)


def probe(cfg) -> tuple:
    """(warnings, notes): one warning per thing that cannot be reached, with its fix; a note per one that can."""
    warnings, notes = [], []
    for check in (memory, model, lifecycle, ripple):
        w, n = check(cfg)
        warnings += w
        notes += n
    return warnings, notes


def memory(cfg) -> tuple:
    from hippocampus.memory import MemoryClient
    from hippocampus.status.watch import memory_health

    url = cfg.memory.url
    client = MemoryClient(url, cfg.memory.resolve_bearer(), min(cfg.memory.timeout_seconds, MEMORY_SECONDS))
    view = memory_health(client)
    where = redact.url(url)
    if view["reachable"]:
        return [], [f"# reached: Memory at {where}"]
    if view.get("not_memory"):
        fix = "set memory.url to SerenMemory's own address (its default is http://127.0.0.1:7420)"
    else:
        fix = ("start SerenMemory there (seren-memory), or set memory.url to where it listens "
               "(its default is http://127.0.0.1:7420)")
    return [f"memory.url {where} does not answer ({view['error']}): every sleep, tend and check needs it; {fix}"], []


def model(cfg) -> tuple:
    from hippocampus.status.watch import model_health, model_watched

    mcfg = cfg.model
    if not model_watched(mcfg):
        return [], []           # none (mechanical mode), or managed: started at bedtime, its files probed below
    view = model_health(mcfg)
    where = redact.url(mcfg.url)
    if view["answering"]:
        return [], [f"# reached: the model at {where}"]
    return [f"model.url {where} does not answer ({view['error']}): the sleeps cannot draft; start the model "
            "server there, or set model.url to where it listens (an OpenAI-compatible URL ending in /v1), or "
            "leave model.url blank for mechanical mode"], []


def lifecycle(cfg) -> tuple:
    lc = cfg.model.lifecycle
    if not cfg.model.configured:
        return [], []
    warnings, notes = [], []
    if lc.server:
        found = program(lc.server)
        if found:
            notes.append(f"# found: model.lifecycle.server {found}")
        else:
            warnings.append(f"model.lifecycle.server {lc.server} {_missing(lc.server)}: the model cannot be "
                            "started at bedtime; install the server (llama-server) there, or set "
                            "model.lifecycle.server to its full path")
    if lc.model_path:
        path = os.path.expanduser(lc.model_path)
        if os.path.exists(path):
            notes.append(f"# found: model.lifecycle.model_path {path}")
        else:
            warnings.append(f"model.lifecycle.model_path {lc.model_path} does not exist: the server would have "
                            "no model to load; download the model file (.gguf) there, or set "
                            "model.lifecycle.model_path to where it is")
    if lc.start and lc.manage:
        first = _first_word(lc.start)
        if first and not program(first):
            warnings.append(f"model.lifecycle.start runs {first}, which {_missing(first)}: the model cannot be "
                            "started at bedtime; install it, or give its full path in model.lifecycle.start")
    if lc.cwd and not os.path.isdir(os.path.expanduser(lc.cwd)):
        warnings.append(f"model.lifecycle.cwd {lc.cwd} is not a folder: create it, or set model.lifecycle.cwd "
                        "to the folder the server should start in")
    return warnings, notes


def ripple(cfg) -> tuple:
    """A script ripple: the account it runs as and its command on that account's PATH; an endpoint: its URL."""
    kind = (cfg.ripple.type or "").strip().lower()
    if kind not in ("script", "endpoint"):
        return [], []
    from hippocampus.ripple.check import checks

    wanted = ("account", "command") if kind == "script" else ("url",)
    lines = [ln for ln in checks(cfg.ripple, memory_url=cfg.memory.url) if ln.check in wanted]
    warnings = [f"ripple {ln.check}: {ln.text} (seren-hippocampus check-ripple checks the whole wake-up)"
                for ln in lines if not ln.ok]
    notes = [f"# ripple {ln.check}: {ln.text}" for ln in lines if ln.ok]
    return warnings, notes


def program(name: str) -> Optional[str]:
    """A program's path: a path given must be an executable file; a bare name is looked up on PATH."""
    name = os.path.expanduser(name)
    if os.path.isabs(name) or os.sep in name or (os.altsep and os.altsep in name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name)


def _missing(name: str) -> str:
    path = os.path.expanduser(name)
    if os.path.isabs(path) or os.sep in path:
        return "is not an executable file" if os.path.exists(path) else "does not exist"
    return "is not on this account's PATH"


def _first_word(line: str) -> str:
    from hippocampus.model.process import split_command

    try:
        argv = split_command(line)
    except ValueError:
        return ""
    if isinstance(argv, str):       # Windows: the whole line; its first word, quoted or not
        argv = argv.strip()
        return argv[1:].split('"', 1)[0] if argv.startswith('"') else (argv.split() or [""])[0]
    return argv[0] if argv else ""
