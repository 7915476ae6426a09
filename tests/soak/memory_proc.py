"""The real SerenMemory (tests/harness/memory_server.py) in a process of its own, so a fault can stop it
and start it again on the same port and the same store.

    python -m tests.soak.memory_proc --dir STORE --port PORT [--short-term-seconds S]
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(prog="soak-memory")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--short-term-seconds", type=int, default=691200)
    args = ap.parse_args(argv)
    from tests.harness.memory_server import MemoryServer

    srv = MemoryServer(Path(args.dir), port=args.port)
    srv.cfg.lifetimes.short_term_seconds = args.short_term_seconds   # the app's own config object
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    srv.start()
    print(f"soak memory on {srv.url} (store {args.dir})", flush=True)
    done.wait()
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
