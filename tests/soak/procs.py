"""The process table, read black-box (psutil): which stand-in model servers of this world are up."""
from __future__ import annotations

import psutil


def standin_procs(model_path: str) -> list:
    """Live processes of this world's stand-in (its -m names this world's model file); zombies are gone."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            cmd = p.info["cmdline"] or []
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if "tests.soak.standin" in cmd and model_path in cmd:
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def standin_pids(model_path: str) -> list:
    return sorted(p.pid for p in standin_procs(model_path))
