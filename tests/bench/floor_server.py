"""The floor for bench_status: a bare Falcon app on waitress (same thread count) answering GET /status
with a fixed body of the real one's size (the bench measures it first). Whatever the real /status costs
beyond this is ours.

    python tests/bench/floor_server.py <port> [<threads> [<body bytes>]]
"""
from __future__ import annotations

import json
import sys

import falcon
from waitress import serve

SIZE = int(sys.argv[3]) if len(sys.argv) > 3 else 4500
BODY = {"service": "seren-hippocampus", "padding": "", "n": list(range(20))}
BODY["padding"] = "x" * max(0, SIZE - len(json.dumps(BODY)))


class Fixed:
    def on_get(self, req, resp):
        resp.media = BODY


app = falcon.App()
app.add_route("/status", Fixed())

if __name__ == "__main__":
    serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=int(sys.argv[2]) if len(sys.argv) > 2 else 8,
          _quiet=True)
