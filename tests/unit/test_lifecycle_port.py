"""A managed model whose port is held by another program: the service says so and launches nothing."""
from __future__ import annotations

import http.server
import threading

import pytest

from hippocampus.model.client import ModelUnavailable
from tests.unit.test_lifecycle import rig  # noqa: F401 - the rig fixture


class NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self):       # noqa: N802 - another program's server: no /health route
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_port_answered_by_another_program_is_named_and_no_second_server_is_launched(rig):  # noqa: F811
    other = http.server.ThreadingHTTPServer(("127.0.0.1", rig.port), NotFound)
    threading.Thread(target=other.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        lc = rig.make(ready_timeout_seconds=3.0)
        with pytest.raises(ModelUnavailable) as ei:
            lc.ensure()
        said = str(ei.value)
        assert "404" in said and "not the model's server" in said and "model.url" in said, said
        assert rig.saves == [] and rig.launches() == 0      # no second server on that port
        [failed] = rig.kinds("model_start_failed")
        assert failed["error"] == said
        assert lc.snapshot()["state"] == "failed" and lc.snapshot()["last_error"] == said
    finally:
        other.shutdown()
        other.server_close()
