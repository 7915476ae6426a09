"""The real SerenMemory (the test harness's config and offline embedder) in a process of its own, so a
fault can stop it and start it again on the same port and the same store.

    python -m tests.soak.memory_proc --dir STORE --port PORT [--short-term-seconds S]

Unlike the harness's session server it is built without _allow_store_reset: a store that allows it is
wiped by its own close(), so a graceful stop (SIGTERM) would come back empty.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(prog="soak-memory")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--short-term-seconds", type=int, default=691200)
    args = ap.parse_args(argv)
    import uvicorn
    from seren_memory.app import create_app

    from tests.harness.embedder import HashEmbedder
    from tests.harness.memory_server import memory_config

    cfg = memory_config(Path(args.dir), short_term_seconds=args.short_term_seconds)
    app = create_app(cfg, embedding_function=HashEmbedder())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning",
                                           lifespan="on"))
    print(f"soak memory on http://127.0.0.1:{args.port} (store {args.dir})", flush=True)
    server.run()                      # uvicorn's own handlers: SIGTERM and SIGINT stop it gracefully
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
