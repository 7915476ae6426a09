"""Settings that name something the service already has: server.mcp_mount must be a path no route answers (a
route and the MCP endpoint on one path shadow each other), and notify.events / ripple.events must name events
the service sends (a misspelled one is never sent). Each mistake is refused at load, named, and check-config
says it (exit 1)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hippocampus import config

ROOT = Path(__file__).resolve().parents[2]


def _load(tmp_path: Path, text: str, environ=None):
    p = tmp_path / "h.yaml"
    p.write_text(text, encoding="utf-8")
    return config.load(str(p), environ={} if environ is None else environ, announce=False)


def _check_config(tmp_path: Path, text: str) -> tuple:
    p = tmp_path / "h.yaml"
    p.write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    r = subprocess.run([sys.executable, "-m", "hippocampus", "check-config", "--offline", "--json", "--config",
                        str(p)], capture_output=True, text=True, encoding="utf-8", env=env, cwd=str(ROOT), timeout=60)
    return r.returncode, json.loads(r.stdout)


# ---------------------------------------------------------------- server.mcp_mount on a route

@pytest.mark.parametrize("given, route", [
    ("/status", "/status"), ("/health", "/health"), ("viewer/", "/viewer"), ("/voice", "/voice"),
    ("/events", "/events"), ("/replay/abc", "/replay/{draft_id}"), ("/actors/sleeper/restart",
                                                                   "/actors/{name}/restart")])
def test_an_mcp_mount_a_route_answers_is_refused_named(tmp_path, given, route):
    cfg = _load(tmp_path, f"server:\n  mcp_mount: {given!r}\n")
    assert cfg.server.mcp_mount == "/mcp"
    shown = "/" + given.strip("/")                  # as the loader spells a mount
    assert cfg.warnings == [
        f"'server.mcp_mount' = {shown!r} is a path the service already answers ({route}): the route and the MCP "
        f"endpoint would shadow each other; using the default '/mcp'. Mount it on a path of its own, like "
        f"/tools/mcp"]


def test_an_mcp_mount_from_the_environment_is_refused_the_same_way(tmp_path):
    cfg = _load(tmp_path, "server:\n  port: 7424\n", environ={"SEREN_HIPPOCAMPUS_MCP_MOUNT": "/health"})
    assert cfg.server.mcp_mount == "/mcp"
    assert [w for w in cfg.warnings if "'server.mcp_mount' = '/health' is a path the service already answers"]


@pytest.mark.parametrize("given, used", [("/tools/mcp", "/tools/mcp"), ("/health/mcp", "/health/mcp"),
                                         ("/actors/mcp", "/actors/mcp"), ("/mcp", "/mcp")])
def test_an_mcp_mount_of_its_own_is_taken(tmp_path, given, used):
    cfg = _load(tmp_path, f"server:\n  mcp_mount: {given}\n")
    assert (cfg.server.mcp_mount, cfg.warnings) == (used, [])


def test_the_routes_the_config_knows_are_the_apps():
    from falcon import inspect

    from hippocampus.config import names
    from hippocampus.http.app import create_app

    app = create_app(types.SimpleNamespace(config=lambda: config.Config()))
    assert sorted(names.ROUTES) == sorted(r.path for r in inspect.inspect_routes(app))


def test_check_config_refuses_an_mcp_mount_on_a_route(tmp_path):
    code, rep = _check_config(tmp_path, "server:\n  mcp_mount: /status\n")
    assert code == 1 and rep["config"]["server"]["mcp_mount"] == "/mcp"
    assert any(w.startswith("'server.mcp_mount' = '/status' is a path the service already answers (/status)")
               for w in rep["warnings"]), rep["warnings"]
