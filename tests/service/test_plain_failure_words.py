"""The rarely reached failures in plain words (issue 31: no exception class names in anything a person reads):
the context check against a model server that hangs up, a model start whose folder is gone, the ripple
endpoint's and the MCP Memory entry's check against a port nothing listens on or a server that closes, a
crashed actor on /actors, a restart asked of a stopped supervisor, and a tool that faults in the MCP answer.
Each on the real thing: real sockets (tests/harness/misbehaving.py), a real process start, the real service."""
from __future__ import annotations

import requests

from hippocampus.config import RippleConfig
from hippocampus.mcp.server import run_tool
from hippocampus.ripple import check as ripple_check
from hippocampus.ripple.claude_checks import what_it_is
from hippocampus.ripple.probe import Probe
from tests.harness.memory_server import free_port
from tests.harness.misbehaving import Misbehaving
from tests.harness.reviewer import wait_for
from tests.service.test_transport_words import plain
from tests.unit.test_lifecycle import Rig

REFUSED = "refused the connection: nothing is listening there"


class PropsMisbehave(Misbehaving):
    """A model server whose /health and /v1/models answer 200 {}, and whose /props misbehaves (mode)."""
    def _read_request(self, conn):
        first = super()._read_request(conn)
        return b"PROPS " + first if first and b" /props" in first else first


def test_the_context_check_against_a_server_that_hangs_up_is_plain_on_status(make_config, start_service):
    server = PropsMisbehave("half", "/v1", only_posts=True)
    try:
        svc = start_service(make_config(model={"url": server.url}, supervisor={"check_seconds": 0.05}))
        st = wait_for(lambda: (lambda s: s if (s.get("model_fit") or {}).get("error") else None)(
            requests.get(svc.url + "/status", timeout=10).json()), timeout=30, interval=0.1, what="the context check")
    finally:
        server.close()
    root = server.url[:-len("/v1")]
    assert st["model_fit"]["error"] == ("the context size could not be checked: the model server at "
                                        f"{root} hung up in the middle of its answer, so the answer was cut short")
    [row] = [r for r in st["say"]["cards"]["model"]["rows"] if r[0] == "context"]
    assert row[1] == "not measured: " + st["model_fit"]["error"], row
    plain(str(st["model_fit"])), plain(str(row))


def test_a_model_start_whose_folder_is_gone_says_so_without_a_class_name(tmp_path):
    rig = Rig(tmp_path)
    try:
        gone = tmp_path / "no-such-folder"
        lc = rig.make(manage=True, cwd=str(gone))
        try:
            lc.ensure()
        except Exception as exc:  # noqa: BLE001 - ModelUnavailable, its words checked below
            said = str(exc)
    finally:
        rig.cleanup()
    assert said.startswith("start failed: ") and "No such file or directory" in said and str(gone) in said, said
    assert lc.snapshot()["last_error"] == said and rig.kinds("model_start_failed")[0]["error"] == said
    plain(said)


def test_the_ripple_endpoint_check_words_a_refusal_and_a_close_plainly():
    url = f"http://127.0.0.1:{free_port()}/api/v1/system/ripple"
    closes = Misbehaving("close", "/api/v1/system/ripple")
    try:
        for where, did in ((url, REFUSED), (closes.url, "closed the connection without answering")):
            [_, line] = ripple_check.checks(RippleConfig(type="endpoint", url=where), probe=Probe())
            assert not line.ok and line.text.startswith(f"{where} does not answer ({did}): start the receiver"), line
            plain(line.text)
    finally:
        closes.close()


def test_an_mcp_memory_entry_nothing_answers_is_worded_plainly():
    url = f"http://127.0.0.1:{free_port()}/mcp"
    ok, said = what_it_is({"type": "http", "url": url}, Probe())
    assert not ok and said == f"points at {url}, which does not answer ({REFUSED})", said
    plain(said)


def test_a_crashed_actor_s_last_error_on_actors_names_no_class(make_config, start_service, crashes):
    svc = start_service(make_config(supervisor={"backoff_seconds": 0.05, "check_seconds": 0.05}), children=crashes.children)
    assert crashes.crash(svc.runtime, "ripple") is True
    a = wait_for(lambda: (lambda a: a if a.get("restarts") == 1 and a.get("last_error") else None)(
        requests.get(svc.url + "/actors", timeout=5).json()["actors"]["ripple"]), timeout=10, what="the restart")
    assert a["last_error"] == "injected crash in ripple (tell)", a
    [crashed] = requests.get(svc.url + "/events", params={"type": "actor_crashed"}, timeout=5).json()["entries"]
    plain(a["last_error"]), plain(str(crashed))


def test_a_restart_asked_of_a_stopped_supervisor_says_so_plainly(make_config, start_service):
    svc = start_service(make_config())
    svc.runtime.supervisor.stop(block=True, timeout=20)        # the supervisor is gone; the HTTP door is not
    r = requests.post(svc.url + "/actors/chain/restart", timeout=10)
    assert r.status_code == 503, r.text
    assert "the supervisor has stopped, so nothing was restarted; restart the service" in r.text, r.text
    plain(r.text)


def test_a_tool_that_faults_is_answered_in_words_over_mcp():
    said, failed = run_tool("sleep_status", lambda: {}["pile"], {})
    assert failed and said == ("sleep_status failed: an unexpected fault inside the hippocampus ('pile'); the "
                               "service log has the details."), said
    plain(said)
