"""The real SerenMemory in its own process, for the benchmarks (so its CPU is never the service's).

    python tests/bench/memory_helper.py <persist_dir>

Prints one line `READY <url> <pid>`, then answers commands on stdin, one per line,
each with one line `OK <json>` (or `ERR <text>`):

    fresh <dir>                   a brand-new empty store in the running app
    seed <n> <topics> [<ts0>]     n short-terms spread round-robin over `topics` topics, written straight
                                  through the store object in batches (no HTTP), oldest ts0 (default: now - n)
    count                         how many short-terms the store holds
    quit
"""
from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from tests.harness.embedder import embed_text  # noqa: E402
from tests.harness.memory_server import MemoryServer  # noqa: E402

WORDS = ("tea garden river cello lantern harbour maple violin orchard pebble meadow copper "
         "window sparrow compass ember willow thistle marble quill").split()


def seed(srv: MemoryServer, n: int, topics: int, ts0: float) -> dict:
    store = srv.app.state.store
    t0 = time.monotonic()
    batch = 2000
    for start in range(0, n, batch):
        ids, docs, metas, vecs = [], [], [], []
        for i in range(start, min(n, start + batch)):
            t = i % topics
            topic = f"topic-{t:03d}"
            content = f"note {i} about {WORDS[t % len(WORDS)]} and {WORDS[i % len(WORDS)]}, seen on visit {i // topics}"
            ids.append(uuid.uuid4().hex)
            docs.append(content)
            metas.append({"topic": topic, "source": "assistant", "ts": ts0 + i, "pinned": False})
            vecs.append(embed_text(f"{topic}. {content}"))
        store.short.add(ids=ids, documents=docs, metadatas=metas, embeddings=vecs)
    return {"seeded": n, "topics": topics, "seconds": round(time.monotonic() - t0, 2)}


def main() -> int:
    persist = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hippocampus-bench-memory")
    persist.mkdir(parents=True, exist_ok=True)
    srv = MemoryServer(persist).start()
    print(f"READY {srv.url} {os.getpid()}", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            cmd = words[0]
            if cmd == "quit":
                print("OK {}", flush=True)
                break
            if cmd == "fresh":
                srv.fresh_store(Path(words[1]))
                out: dict = {"fresh": words[1]}
            elif cmd == "seed":
                n, topics = int(words[1]), int(words[2])
                ts0 = float(words[3]) if len(words) > 3 else time.time() - n
                out = seed(srv, n, topics, ts0)
            elif cmd == "count":
                out = {"short": srv.app.state.store.short.count()}
            else:
                raise ValueError(f"unknown command {cmd!r}")
            print("OK " + json.dumps(out), flush=True)
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            print(f"ERR {type(exc).__name__}: {exc}", flush=True)
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
