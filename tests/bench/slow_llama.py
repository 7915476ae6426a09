"""tests/harness/fake_llama_server.py, unchanged, but every chat answer takes FAKE_LLAMA_DELAY seconds
(default 3): a managed model that spends its time generating, for bench_residency.

    python tests/bench/slow_llama.py -m MODEL --host H --port P [extra args...]
"""
from __future__ import annotations

import http.server
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "harness"))

DELAY = float(os.environ.get("FAKE_LLAMA_DELAY", "3"))


class SlowHandler(http.server.BaseHTTPRequestHandler):
    def send_response(self, code, message=None):
        if code == 200 and self.command == "POST" and self.path.split("?")[0].endswith("/chat/completions"):
            time.sleep(DELAY)                 # "generating"
        super().send_response(code, message)


import fake_llama_server  # noqa: E402

fake_llama_server.BaseHTTPRequestHandler = SlowHandler

if __name__ == "__main__":
    sys.exit(fake_llama_server.main(sys.argv[1:]))
