"""The world the soak runs in: the real SerenMemory, the service as a real process in thread mode, the
managed stand-in model server, the webhook, the ripple endpoint, and each day's new short-terms.

Every part is real and local: Memory is tests/harness/memory_server.py (in its own process, so a fault
can restart it on the same store, or a server the caller already runs); the service is
`python -m hippocampus --config ...`; the stand-in (tests/soak/standin.py) is started and stopped by
the service's own lifecycle through a wrapper named as model.lifecycle.server.
"""
from __future__ import annotations

import getpass
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional

import requests

from hippocampus.demo.waiting import wait_for
from tests.harness.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
RUNNING_BITS = ["fred durst", "green tea", "rose garden"]
NOISE_TOPIC = "fish dream"
ERRAND_TOPIC = "errands"
ONE_OFFS = ["umbrella", "parking", "cloud", "mailbox", "ladder", "kettle", "compass", "lantern", "marble",
            "pebble", "quilt", "violin", "walnut", "yarn", "zipper", "anchor", "button", "candle", "domino"]
BIT_LINES = {
    "fred durst": ["called fred durst the warrior poet of our time", "quoted fred durst at breakfast",
                   "argued fred durst is a misunderstood poet"],
    "green tea": ["drank green tea in the afternoon", "brewed green tea too long", "bought loose green tea"],
    "rose garden": ["walked through the rose garden", "pruned the rose garden", "saw the rose garden bloom"],
}


@dataclass
class Options:
    nights: int = 4
    faults: bool = False
    ripple: str = "endpoint"            # script | endpoint
    nudge: str = "mcp"                  # http | mcp
    handover: bool = False
    real_model: bool = False            # the real llama-server on the tiny model instead of the stand-in
    seed: int = 17
    interval_seconds: float = 4.0       # bedtime: this long after the last sleep
    tick_seconds: float = 0.25
    brief_check_misses: int = 2
    answer_seconds: float = 0.3         # the stand-in's generating time per answer
    warmup_seconds: float = 0.3         # the stand-in's own start-up
    keep_warm_seconds: float = 30.0
    ripple_timeout_seconds: float = 6.0
    short_term_seconds: int = 40        # Memory's lifetime of a short-term (ages out after)
    gap_grace_intervals: float = 8.0
    night_deadline_seconds: float = 90.0
    review_patience_seconds: float = 10.0   # a draft pending this long gets the person's own session
    moods: dict = field(default_factory=lambda: {"slow": 0.2, "slow_seconds": [0.5, 2.0], "silent": 0.08,
                                                 "deny": 0.3, "terminal_deny": 0.1})


# ---------------------------------------------------------------- Memory

class MemoryProc:
    """The real SerenMemory in its own process, on a fixed port and store, so it can be restarted."""

    def __init__(self, root: Path, short_term_seconds: int):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.dir = root / "memory-store"
        self.log = root / "memory.log"
        self.short_term_seconds = short_term_seconds
        self.p: Optional[subprocess.Popen] = None

    def start(self) -> None:
        with open(self.log, "ab") as out:
            self.p = subprocess.Popen([sys.executable, "-m", "tests.soak.memory_proc", "--dir", str(self.dir),
                                       "--port", str(self.port), "--short-term-seconds",
                                       str(self.short_term_seconds)],
                                      cwd=str(ROOT), stdout=out, stderr=subprocess.STDOUT, env=_env())
        wait_for(self.healthy, timeout=90, interval=0.05, what="SerenMemory to answer")

    def healthy(self) -> bool:
        if self.p is not None and self.p.poll() is not None:
            raise RuntimeError(f"SerenMemory exited {self.p.returncode}: see {self.log}")
        try:
            return requests.get(self.url + "/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def stop(self, hard: bool = False) -> None:
        if self.p is None or self.p.poll() is not None:
            return
        self.p.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)

    def restart(self, down_seconds: float = 0.0, hard: bool = False) -> None:
        self.stop(hard=hard)
        if down_seconds:
            time.sleep(down_seconds)        # the outage itself: Memory is away this long
        self.start()


class SharedMemory:
    """A SerenMemory the caller already runs (the test session's): it cannot be restarted here."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def start(self) -> None:
        return None

    def stop(self, hard: bool = False) -> None:
        return None

    def restart(self, down_seconds: float = 0.0, hard: bool = False) -> None:
        raise RuntimeError("a shared SerenMemory cannot be restarted by the soak")


# ---------------------------------------------------------------- small receivers

class Receiver:
    """A loopback HTTP receiver on a fixed port that can go down (port closed) and come back."""

    def __init__(self, path: str, on_post: Optional[Callable[[dict], None]] = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        self.on_post = on_post
        self.received: list = []
        self.hang_seconds = 0.0
        self.server: Optional[ThreadingHTTPServer] = None

    def up(self) -> None:
        if self.server is not None:
            return
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"null")
                rec.received.append(body)
                if rec.hang_seconds:
                    wait, rec.hang_seconds = rec.hang_seconds, 0.0
                    time.sleep(wait)                # past the caller's timeout: it gives up
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "11")
                    self.end_headers()
                    self.wfile.write(b'{"ok":true}')
                except OSError:
                    pass
                if rec.on_post is not None:
                    threading.Thread(target=rec.on_post, args=(body,), daemon=True).start()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def down(self) -> None:
        if self.server is None:
            return
        self.server.shutdown()
        self.server.server_close()
        self.server = None


# ---------------------------------------------------------------- the service

def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
    env.update(PYTHONUNBUFFERED="1", SEREN_MEMORY_UPDATES_ENABLED="0", ANONYMIZED_TELEMETRY="False")
    return env


class ServiceProc:
    """`python -m hippocampus --config <yaml>` in thread mode; SIGKILLed and restarted on its own state."""

    def __init__(self, root: Path, cfg: dict):
        self.port = cfg["server"]["port"]
        self.url = f"http://127.0.0.1:{self.port}"
        self.state_dir = Path(cfg["sleep"]["state_path"]).parent
        self.yaml = root / "seren-hippocampus.yaml"
        self.yaml.write_text(json.dumps(cfg, indent=1), encoding="utf-8")      # JSON is yaml
        self.log = root / "service.log"
        self.p: Optional[subprocess.Popen] = None
        self.starts = 0

    def start(self) -> None:
        with open(self.log, "ab") as out:
            out.write(f"\n===== start {self.starts + 1} =====\n".encode())
            out.flush()
            self.p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", str(self.yaml)],
                                      cwd=str(ROOT), env=_env(), stdout=out, stderr=subprocess.STDOUT)
        self.starts += 1
        wait_for(self._up, timeout=60, interval=0.05, what="the service to answer")

    def _up(self) -> bool:
        if self.p.poll() is not None:
            raise RuntimeError(f"the service exited {self.p.returncode}: see {self.log}")
        try:
            return requests.get(self.url + "/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def alive(self) -> bool:
        return self.p is not None and self.p.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.p.send_signal(signal.SIGKILL)
            self.p.wait(15)

    def stop(self) -> int:
        if not self.alive():
            return self.p.returncode if self.p else 0
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait(10)

    def get(self, path: str, **params):
        r = requests.get(self.url + path, params=params or None, timeout=10)
        r.raise_for_status()
        return r.json()

    def events(self) -> list:
        """Every event the service kept, oldest first."""
        return list(reversed(self.get("/events", limit=100000)["entries"]))


# ---------------------------------------------------------------- the world

class World:
    def __init__(self, root: Path, opts: Options, memory=None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.opts = opts
        self.rng = random.Random(opts.seed)
        self.memory = memory or MemoryProc(self.root, opts.short_term_seconds)
        self.shorts: dict = {}           # short id -> {kind, topic, content, night, created}
        self.forgets: dict = {}          # memory id -> {flagged_at, contents}
        self.errands: list = []
        self.webhook = Receiver("/hook")
        self.endpoint = Receiver("/ripple", on_post=self._endpoint_ripple)
        self.model_path = str(self.root / "models" / "soak-small.gguf")
        self.standin_log = self.root / "standin.jsonl"
        self.model_port = free_port()
        self.service: Optional[ServiceProc] = None
        self.sessions: list = []          # threads of sessions run in this process

    # ------------------------------------------------------------ set-up
    def _standin_files(self) -> str:
        Path(self.model_path).parent.mkdir(parents=True, exist_ok=True)
        Path(self.model_path).write_bytes(b"GGUF soak stand-in")
        wrapper = self.root / "bin" / "llama-server"
        wrapper.parent.mkdir(parents=True, exist_ok=True)
        o = self.opts
        wrapper.write_text("#!/bin/sh\n"
                           f"export SOAK_STANDIN_LOG={shlex.quote(str(self.standin_log))}\n"
                           f"export SOAK_STANDIN_WARMUP={o.warmup_seconds}\n"
                           f"export SOAK_STANDIN_ANSWER={o.answer_seconds}\n"
                           f"export PYTHONPATH={shlex.quote(str(ROOT))}\n"
                           f'exec {shlex.quote(sys.executable)} -m tests.soak.standin "$@"\n')
        wrapper.chmod(0o755)
        return str(wrapper)

    def _real_model_files(self) -> tuple:
        """The real llama-server and a copy of the tiny model in this world's folder (so the process table
        tells this world's server from any other on the machine). Raises RuntimeError with the reason when
        the binary is not built or cannot run here."""
        import shutil

        from tests.harness import llama_server, tiny_gguf

        reason = llama_server.unavailable()
        if reason:
            raise RuntimeError(f"--real-model cannot run here: {reason}")
        Path(self.model_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tiny_gguf.tiny_model(seed=0), self.model_path)
        return str(llama_server.binary()), f"-c 4096 -np 1 -t 1 --seed {self.opts.seed}"

    def model_config(self) -> dict:
        o = self.opts
        lifecycle = {"poll_seconds": 0.05, "ready_timeout_seconds": 30, "keep_warm_seconds": o.keep_warm_seconds,
                     "handover": o.handover, "retry_after_seconds": 1, "stop_grace_seconds": 3,
                     "model_path": self.model_path}
        url = f"http://127.0.0.1:{self.model_port}/v1"
        if not o.real_model:
            return {"url": url, "timeout_seconds": 30,
                    "lifecycle": {**lifecycle, "server": self._standin_files(), "server_args": "--soak"}}
        from tests.harness.tiny_schema import model_block

        server, args = self._real_model_files()
        return model_block(url, lifecycle={**lifecycle, "server": server, "server_args": args})

    def service_config(self) -> dict:
        o = self.opts
        state = self.root / "state" / "state.json"
        ripple: dict = {"type": o.ripple, "timeout_seconds": o.ripple_timeout_seconds, "run_as": getpass.getuser()}
        if o.ripple == "script":
            ripple.update(command=[sys.executable, "-m", "tests.soak.main_model", str(self.root)], cwd=str(ROOT))
        else:
            ripple.update(url=self.endpoint.url)
        return {
            "server": {"port": free_port()},
            "memory": {"url": self.memory.url, "timeout_seconds": 5},
            "model": self.model_config(),
            "sleep": {"mode": "thread", "interval_seconds": o.interval_seconds, "tick_seconds": o.tick_seconds,
                      "tend_cycle": not o.handover, "tend_interval_seconds": 2.0,
                      "nudge_wait_seconds": o.ripple_timeout_seconds + 2, "promote_min_evidence": 2,
                      "max_attempts": 3, "gap_grace_intervals": o.gap_grace_intervals, "brief_request": True,
                      "brief_check_misses": o.brief_check_misses, "state_path": str(state)},
            "notify": {"webhook_url": self.webhook.url, "timeout_seconds": 2,
                       "events": ["draft_submitted", "sleep_failed", "chain_closed", "purged", "brief_requested",
                                  "tend_resubmitted", "chain_ended"]},
            "ripple": ripple,
            "supervisor": {"backoff_seconds": 0.05, "check_seconds": 0.05},
            "events": {"keep": 100000},
        }

    def start(self) -> None:
        self.memory.start()
        self.webhook.up()
        if self.opts.ripple == "endpoint":
            self.endpoint.up()
        cfg = self.service_config()
        self.service = ServiceProc(self.root, cfg)
        (self.root / "world.json").write_text(json.dumps({
            "memory_url": self.memory.url, "service_url": self.service.url, "seed": self.opts.seed,
            "nudge": self.opts.nudge, "handover": self.opts.handover, "model_path": self.model_path,
            "running_bits": RUNNING_BITS, "noise_topic": NOISE_TOPIC, "errand_topic": ERRAND_TOPIC,
            "moods": self.opts.moods}, indent=1), encoding="utf-8")
        self.service.start()

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
        for t in self.sessions:
            t.join(timeout=30)
        self.webhook.down()
        self.endpoint.down()
        self.memory.stop()

    # ------------------------------------------------------------ the main model's wake-ups in this process
    def _endpoint_ripple(self, body: dict) -> None:
        from tests.soak.main_model import Session

        event = {k: v for k, v in body.items() if k not in ("service", "message")}
        event["type"] = body.get("event")
        Session(self.root, event, "endpoint").run()

    def person_session(self) -> threading.Thread:
        """The person opens a session of their own: it sees the review note and reviews what waits."""
        from tests.soak.main_model import Session

        t = threading.Thread(target=lambda: Session(self.root, {"type": "session", "seq": time.time()},
                                                    "session").run(), daemon=True)
        t.start()
        self.sessions.append(t)
        return t

    # ------------------------------------------------------------ Memory, as the person uses it
    def _mem(self, method: str, path: str, **kw):
        r = requests.request(method, self.memory.url + path, timeout=30, **kw)
        r.raise_for_status()
        return r.json()

    def _short(self, night: int, kind: str, topic: str, content: str) -> None:
        sid = self._mem("POST", "/short", json={"content": content, "topic": topic})["id"]
        self.shorts[sid] = {"kind": kind, "topic": topic, "content": content, "night": night,
                            "created": time.time()}

    def new_day(self, night: int) -> dict:
        """The day's short-terms: running bits (they should become cores, then satellites), the noise
        topic (kept out by the noise hint), a one-off (never a core); an errand now and then."""
        day = {"bits": [], "one_off": None, "errand": False}
        for bit in self.rng.sample(RUNNING_BITS, 2):
            lines = self.rng.sample(BIT_LINES[bit], self.rng.choice([2, 2, 3]))
            for j, line in enumerate(lines):
                self._short(night, "bit", bit, f"On night {night} we {line} (moment {j + 1})")
            day["bits"].append(bit)
        for j in range(2):
            self._short(night, "noise", NOISE_TOPIC, f"On night {night} I dreamt of a fish, again (dream {j + 1})")
        word = ONE_OFFS[(night - 1) % len(ONE_OFFS)]
        topic = f"{word} {night}"
        self._short(night, "oneoff", topic, f"Just once, on night {night}, something about a {word}")
        day["one_off"] = topic
        if night % 4 == 0:
            n = self._mem("POST", "/near", json={"intent": f"water the plants after night {night}",
                                                  "topic": ERRAND_TOPIC, "trigger_type": "always"})
            self.errands.append(n["id"])
            day["errand"] = True
        return day

    def forget_one(self, night: int) -> Optional[str]:
        """Flag a running bit's core for purging (a forget flag), noting every text the purge must take."""
        cores = [c for c in self._mem("GET", "/long", params={"include_satellites": "false"})["entries"]
                 if (c.get("metadata") or {}).get("topic") in RUNNING_BITS and c["id"] not in self.forgets]
        if not cores:
            return None
        core = self.rng.choice(cores)
        sats = self._mem("GET", f"/long/{core['id']}/satellites")["satellites"]
        texts = [core["content"]] + [s["content"] for s in sats]
        drafts = self._mem("GET", "/drafts", params={"limit": 1000})["entries"]
        gone_ids = {core["id"]} | {s["id"] for s in sats}
        for d in drafts:
            for op in d.get("operations", []):
                if op.get("long_term_id") in gone_ids and op.get("status") == "approved":
                    texts += [self.shorts[s]["content"] for s in op.get("source_short_ids") or [] if s in self.shorts]
        self._mem("POST", f"/long/{core['id']}/forget", json={"reason": f"asked to forget, night {night}"})
        self.forgets[core["id"]] = {"flagged_at": time.time(), "night": night, "texts": sorted(set(texts)),
                                    "ids": sorted(gone_ids)}
        return core["id"]

    # ------------------------------------------------------------ what the instruments wrote
    def wakeups(self) -> list:
        return _jsonl(self.root / "wakeups.jsonl")

    def standin_timeline(self) -> list:
        return _jsonl(self.standin_log)

    def note_killed(self, pid: int) -> None:
        with open(self.standin_log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"pid": pid, "ev": "exit", "t": time.time(), "how": "sigkill"}) + "\n")


def _jsonl(path: Path) -> list:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out = []
    for ln in lines:
        try:
            out.append(json.loads(ln))
        except ValueError:
            continue                     # a line cut short by a kill
    return out
