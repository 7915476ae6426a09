"""The process table, read black-box (psutil): which model servers of this world are up (the stand-in, or the
real llama-server with --real-model: either way, the one whose -m names this world's own model file)."""
from __future__ import annotations

import os

import psutil


def standin_procs(model_path: str) -> list:
    """Live model servers of this world (its -m names this world's model file); zombies are gone."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            cmd = p.info["cmdline"] or []
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            server = "tests.soak.standin" in cmd or (cmd and os.path.basename(cmd[0]) == "llama-server")
            if server and model_path in cmd:
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def standin_pids(model_path: str) -> list:
    return sorted(p.pid for p in standin_procs(model_path))
