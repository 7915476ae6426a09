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
from hippocampus.config import names

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


@pytest.mark.parametrize("given, shown", [("http://127.0.0.1:7424/tools/mcp", "/http://127.0.0.1:7424/tools/mcp"),
                                          ("/mcp?x=1", "/mcp?x=1"), ("/my tools", "/my tools"), ("/mcp#a", "/mcp#a")])
def test_an_mcp_mount_that_is_no_path_is_refused_named(tmp_path, given, shown):
    """Found: the endpoint's whole URL (or a query, a space) was taken as the mount: the client asking at that
    URL got 404 and nothing said why."""
    cfg = _load(tmp_path, f"server:\n  mcp_mount: {given!r}\n")
    assert cfg.server.mcp_mount == "/mcp"
    assert cfg.warnings == [
        f"'server.mcp_mount' = {shown!r} is not a URL path (letters, digits, - . _ ~ and /, like /tools/mcp; no "
        f"scheme, host, query or space); using the default '/mcp'"]


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


# ---------------------------------------------------------------- notify.events and ripple.events

KNOWN = ("actor_crashed, actor_failed, actor_restarted, brief_consumed, brief_requested, brief_unmatched, catch_up, "
         "chain_closed, chain_ended, draft_failed, draft_submitted, kept_for_next_sleep, memory_back, memory_down, "
         "model_back, model_down, model_start_failed, model_started, model_stopped, nudged, operations_dropped, "
         "purged, redraft_failed, restored, sleep_budget_spent, sleep_done, sleep_failed, sleep_interrupted, "
         "tend_interrupted, tend_resubmitted")


@pytest.mark.parametrize("block", ["notify", "ripple"])
def test_a_misspelled_event_is_left_out_named_with_the_known_ones(tmp_path, block):
    cfg = _load(tmp_path, f"{block}:\n  events: [draft_sumbitted, sleep_failed, docket_submitted, bedtime]\n")
    assert getattr(cfg, block).events == ["sleep_failed", "draft_submitted"]
    assert cfg.warnings == [
        f"'{block}.events' names 'draft_sumbitted', which is not an event this service sends, so it would never "
        f"fire; it is left out - did you mean draft_submitted? The events are: {KNOWN}",
        f"'{block}.events' names 'bedtime', which is not an event this service sends, so it would never fire; it "
        f"is left out. The events are: {KNOWN}"]


def test_every_event_the_service_sends_is_known_and_no_other():
    """The names the code emits (read from the source) are the names the settings take."""
    import re

    from hippocampus.config import names

    emitted = set()
    for path in [*ROOT.glob("hippocampus/**/*.py"), *ROOT.glob("actors/**/*.py")]:
        emitted |= set(re.findall(r"\b_?(?:emit|emit_once|bump)\(\s*\"([a-z_]+)\"", path.read_text(encoding="utf-8")))
    emitted |= {f"{kind}_{flip}" for kind in ("memory", "model") for flip in ("down", "back")}   # the watches' flips
    assert sorted(emitted) == sorted(names.EVENTS) == KNOWN.split(", ")


def test_check_config_refuses_a_misspelled_ripple_event(tmp_path):
    code, rep = _check_config(tmp_path, "ripple:\n  events: [brief_requestd, draft_submitted]\n")
    assert code == 1 and rep["config"]["ripple"]["events"] == ["draft_submitted"]
    assert any(w.startswith("'ripple.events' names 'brief_requestd', which is not an event this service sends")
               for w in rep["warnings"]), rep["warnings"]


def test_a_message_for_a_misspelled_event_is_left_out_named(tmp_path):
    """Found: ripple.messages: {draft_submited: ...} was kept and never used: the model got the default text."""
    cfg = _load(tmp_path, "ripple:\n  messages:\n    draft_submited: Review {draft_id}, please.\n"
                          "    tend_resubmitted_terminal: The last one.\n    brief_requested: Brief?\n"
                          "    draft_submitted_terminal: The only one.\n")
    assert cfg.ripple.messages == {"tend_resubmitted_terminal": "The last one.", "brief_requested": "Brief?",
                                   "draft_submitted_terminal": "The only one."}
    assert cfg.warnings == [
        f"'ripple.messages' has a message for 'draft_submited', which is not an event this service sends, so it "
        f"would never be used; it is left out - did you mean draft_submitted? The events are: {KNOWN} (and "
        f"draft_submitted_terminal and tend_resubmitted_terminal, a last attempt's)"]
    from hippocampus.ripple.fire import _BODIES        # every last-attempt wording the ripple has may be set
    assert set(names.TERMINAL) == {k for k in _BODIES if k.endswith("_terminal")}


# ---------------------------------------------------------------- origins

@pytest.mark.parametrize("key", ["allowed_origins", "mcp_allowed_origins"])
def test_an_origin_no_browser_sends_is_left_out_named(tmp_path, key):
    """Found: 'dash.lan:3000' (no scheme) or 'http://dash.lan:3000/page' (a path) was kept and never matched a
    page's Origin: its POSTs were refused 403, told to list the origin in the setting that already listed it."""
    cfg = _load(tmp_path, f"server:\n  {key}: [dash.lan:3000, 'http://dash.lan:3000/page', 'HTTP://ok.lan:3000/']\n")
    assert getattr(cfg.server, key) == ["HTTP://ok.lan:3000/"]
    assert cfg.warnings == [
        f"'server.{key}' has {given!r}, which is not an origin as a browser sends it (scheme://host[:port], no "
        f"path, like http://dash.lan:3000), so no page would ever match it; it is left out"
        for given in ("dash.lan:3000", "http://dash.lan:3000/page")]


def test_check_config_names_a_webhook_url_with_no_scheme(tmp_path):
    """Found: notify.webhook_url: hooks.lan:9000/hook passed check-config with no warning; every event's webhook
    then failed ('No scheme supplied'), as memory.url and model.url without one are warned of."""
    code, rep = _check_config(tmp_path, "notify:\n  webhook_url: hooks.lan:9000/hook\n")
    assert code == 1
    assert "notify.webhook_url hooks.lan:9000/hook has no scheme, so nothing can reach it: set it to " \
           "http://hooks.lan:9000/hook (http:// or https:// in front)" in rep["warnings"], rep["warnings"]
    code, rep = _check_config(tmp_path, "notify:\n  webhook_url: http://hooks.lan:9000/hook\n")
    assert code == 0 and rep["warnings"] == []


@pytest.mark.parametrize("key", ["allowed_hosts", "mcp_allowed_hosts"])
def test_a_host_entry_no_host_header_can_match_is_left_out_named(tmp_path, key):
    """Found: allowed_hosts: ['*'] (or '*.lan', 'box lan') was kept and matched no Host: every request by that name
    got 421 'add it to server.allowed_hosts', though the operator had, as they thought."""
    cfg = _load(tmp_path, f"server:\n  {key}: ['*', '*.lan:7424', 'http://Box.lan:9999/', 'box.lan:*', '[::1]']\n")
    assert getattr(cfg.server, key) == ["http://Box.lan:9999/", "box.lan:*", "[::1]"]
    assert cfg.warnings == [
        f"'server.{key}' has {given!r}, which is not a host name or address with an optional :port (or :*), so "
        f"no request's Host would ever match it (each name is listed whole: no wildcards); it is left out"
        for given in ("*", "*.lan:7424")]
