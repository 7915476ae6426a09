"""What the reliability suite shares: a loopback proxy in front of Memory (faults and kill points),
the service as a real subprocess, a small model that follows the prompt contract, and Memory checks."""
from __future__ import annotations

import collections
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional

import requests

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
REVIEW_TOPIC = "hippocampus, review"
REDRAFT = "THE CRITIQUE"
CHILDREN = {"scheduler", "chain", "sleeper", "lifecycle", "ripple", "notifier", "quality", "replay",
            "memory_health", "model_health", "wakeup", "queue"}      # the last five are the watches (actors/watch.py)


# ---------------------------------------------------------------- the small model, by the prompt contract

def markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def prompt_of(body: dict) -> str:
    return body["messages"][-1]["content"]


def is_redraft(body: dict) -> bool:
    return REDRAFT in prompt_of(body)


def scripted_answer(body: dict) -> dict:
    """One new_core per pile citing every fragment; a redraft says what the critique says after 'say:'."""
    prompt = prompt_of(body)
    frags = markers(prompt, "f")
    if REDRAFT in prompt:
        critique = prompt.split("THE CRITIQUE:", 1)[1].strip().splitlines()[0]
        m = re.search(r"say:\s*(.+)", critique)
        content = m.group(1).strip() if m else "A corrected statement"
        return {"content": json.dumps({"operations": [{"kind": "new_core", "content": content,
                                                        "fragments": frags, "target": None,
                                                        "rationale": "as the critique says"}]})}
    topic = re.search(r"^Topic: (.+)$", prompt, flags=re.M).group(1)
    return {"content": json.dumps({"operations": [{"kind": "new_core", "content": f"Something true about {topic}",
                                                    "fragments": frags, "target": None,
                                                    "rationale": "the fragments agree"}]})}


class Delays:
    """Seconds the scripted model waits before a draft's or a redraft's answer; the next `undelayed` of them at once."""

    def __init__(self) -> None:
        self.draft, self.redraft, self.undelayed = 0.0, 0.0, 0

    def responder(self, body: dict) -> dict:
        reply = scripted_answer(body)
        delay = self.redraft if is_redraft(body) else self.draft
        if delay and self.undelayed > 0:
            self.undelayed -= 1
        elif delay:
            reply["delay"] = delay
        return reply


# ---------------------------------------------------------------- a chain's fragments, review and checks

GARDEN_WORDS = "The rose garden bloomed early"


def seed(hand, tag: str = "") -> str:
    for i in range(2):
        hand.short(f"we drank green tea in the afternoon{tag}, day {i}", topic="tea")
        hand.short(f"the rose garden bloomed early this year{tag}, visit {i}", topic="garden")
    return hand.brief(f"tea and the garden mattered this week{tag}")


def review_pending(hand) -> list:
    """The reviewer: attempt 1 - deny the garden operation (with words to use), approve the rest;
    a later attempt - approve everything. Returns the ids reviewed."""
    done = []
    for d in hand.drafts("pending"):
        if int(d.get("attempt") or 1) == 1:
            decisions = []
            for op in d["operations"]:
                if op.get("status", "pending") != "pending":
                    continue
                if "garden" in (op.get("topic") or "") or "garden" in op["content"].lower():
                    decisions.append({"op": op["index"], "verdict": "deny",
                                      "critique": f"not quite; say: {GARDEN_WORDS}"})
                else:
                    decisions.append({"op": op["index"], "verdict": "approve"})
            hand.review(d["id"], decisions)
        else:
            hand.approve_all(d["id"])
        done.append(d["id"])
    return done


def review_notes(hand) -> list:
    return [n for n in hand.near() if (n.get("metadata") or {}).get("topic") == REVIEW_TOPIC]


def no_duplicate_drafts(drafts: list) -> None:
    first = collections.Counter(d.get("brief_id_used") for d in drafts if int(d.get("attempt") or 1) == 1)
    dup = {b: n for b, n in first.items() if n > 1}
    assert not dup, f"two attempt-1 drafts for one brief: {dup}"
    per_step = collections.Counter((d.get("cluster_id") or d["id"], int(d.get("attempt") or 1)) for d in drafts)
    dup = {k: n for k, n in per_step.items() if n > 1}
    assert not dup, f"two drafts for one step of a chain: {dup}"


def brief_row(hand, brief_id: str) -> dict:
    rows = {b["id"]: b for b in hand.all_briefs()}
    assert brief_id in rows, f"the brief {brief_id} is gone from Memory"
    return rows[brief_id]


def consumed(row: dict) -> bool:
    return bool((row.get("metadata") or {}).get("consumed_at"))


def chain_invariants(hand, brief_id: str) -> dict:
    """No duplicated draft, the brief never lost, and never consumed while its chain is open."""
    drafts = hand.drafts()
    no_duplicate_drafts(drafts)
    row = brief_row(hand, brief_id)
    if consumed(row):
        mine = [d for d in drafts if d.get("brief_id_used") == brief_id or d.get("cluster_id") in
                {x["id"] for x in drafts if x.get("brief_id_used") == brief_id}]
        assert mine and all(d["status"] == "closed" for d in mine), \
            f"the brief was consumed while its chain is open: {[(d['id'], d['status']) for d in mine]}"
    return {"drafts": drafts, "brief": row}


def reviewer_has_work(hand) -> bool:
    """A draft waits for a verdict: a loop that nudged and waits for the chain to close can review it now
    instead of waiting out the rest of its window (the chain cannot close before the review)."""
    return bool(hand.drafts("pending"))


def chain_done(hand, brief_id: str) -> bool:
    drafts = hand.drafts()
    return (len(drafts) >= 2 and all(d["status"] == "closed" for d in drafts)
            and consumed(brief_row(hand, brief_id)) and not review_notes(hand))


# ---------------------------------------------------------------- a loopback proxy in front of Memory

class Hook:
    """A kill point on one request: `before` holds it unsent (it never reaches Memory), `after` sends it
    and holds the answer. `hit` is set when it is reached; the held request ends at `release` (dropped).
    `late` is no kill point: it reaches Memory `delay` s late (after the client gave up), `landed` once answered."""

    def __init__(self, match: Callable[[str, str, dict], bool], when: str = "after", delay: float = 0.0):
        assert when in ("before", "after", "late")
        self.match, self.when, self.delay = match, when, delay
        self.hit, self.release, self.landed = threading.Event(), threading.Event(), threading.Event()
        self.seen: Optional[tuple] = None


def body_json(raw: bytes) -> dict:
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


class MemoryProxy:
    """A ThreadingHTTPServer that forwards to Memory with requests. mode: pass | down (503 to everything) |
    flap (drops `drop` of requests without an answer, answers `slow` of them after `slow_seconds`)."""

    def __init__(self, upstream: str, seed: int = 7):
        self.upstream = upstream.rstrip("/")
        self.mode = "pass"
        self.drop, self.slow, self.slow_seconds = 0.3, 0.2, 1.6
        self.rng = random.Random(seed)
        self._lock = threading.Lock()
        self.hooks: list = []
        self.counts: collections.Counter = collections.Counter()
        self._local = threading.local()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a) -> None:
                pass

            def _answer(self, status: int, headers: dict, data: bytes) -> None:
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    self.close_connection = True

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                method, path = self.command, self.path
                hook, late = proxy._take_hook(method, path, raw), None
                if hook is not None and hook.when == "before":
                    hook.seen = (method, path)
                    hook.hit.set()
                    hook.release.wait(120)
                    self.close_connection = True          # never sent, never answered
                    return
                if hook is not None and hook.when == "late":
                    hook.seen = (method, path)
                    hook.hit.set()
                    time.sleep(hook.delay)                # in transit past the client's timeout, then delivered
                    late, hook = hook, None
                mode, roll = proxy.mode, proxy._roll()
                if mode == "down":
                    proxy.counts["503"] += 1
                    self._answer(503, {"Content-Type": "application/json"},
                                 b'{"detail": "Memory is down (the test proxy says so)"}')
                    return
                if mode == "flap" and roll < proxy.drop:
                    proxy.counts["dropped"] += 1
                    self.close_connection = True          # the connection closes with no answer
                    return
                slow_before = mode == "flap" and roll < proxy.drop + proxy.slow / 2
                slow_after = mode == "flap" and not slow_before and roll < proxy.drop + proxy.slow
                if slow_before:
                    proxy.counts["slow"] += 1
                    time.sleep(proxy.slow_seconds)        # late, before Memory sees it
                try:
                    resp = proxy._session().request(
                        method, proxy.upstream + path, data=raw, timeout=60,
                        headers={k: v for k, v in self.headers.items()
                                 if k.lower() in ("content-type", "authorization", "accept")})
                except requests.RequestException:
                    proxy.counts["upstream_error"] += 1
                    self._answer(502, {"Content-Type": "application/json"}, b'{"detail": "upstream"}')
                    return
                finally:
                    if late is not None:
                        late.landed.set()
                if hook is not None:
                    hook.seen = (method, path)
                    hook.hit.set()
                    hook.release.wait(120)
                    self.close_connection = True          # sent to Memory, the answer never comes back
                    return
                if slow_after:
                    proxy.counts["slow"] += 1
                    time.sleep(proxy.slow_seconds)        # Memory did it; the answer comes too late
                elif not slow_before:
                    proxy.counts["passed"] += 1
                self._answer(resp.status_code, {"Content-Type": resp.headers.get("Content-Type",
                                                                                 "application/json")},
                             resp.content)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="memory-proxy", daemon=True)

    def _session(self) -> requests.Session:
        s = getattr(self._local, "s", None)
        if s is None:
            s = self._local.s = requests.Session()
        return s

    def _roll(self) -> float:
        with self._lock:
            return self.rng.random()

    def _take_hook(self, method: str, path: str, raw: bytes) -> Optional[Hook]:
        with self._lock:
            for hook in self.hooks:
                if hook.match(method, path, body_json(raw) if raw else {}):
                    self.hooks.remove(hook)
                    return hook
        return None

    def hook(self, match: Callable[[str, str, dict], bool], when: str = "after", delay: float = 0.0) -> Hook:
        h = Hook(match, when, delay)
        with self._lock:
            self.hooks.append(h)
        return h

    def clear_hooks(self) -> None:
        with self._lock:
            for h in self.hooks:
                h.release.set()
            self.hooks.clear()

    def start(self) -> "MemoryProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.clear_hooks()
        self.server.shutdown()
        self.server.server_close()


def route(method: str, pattern: str, **body) -> Callable[[str, str, dict], bool]:
    """A hook matcher: this method, a path matching the regex, and these body fields."""
    rx = re.compile(pattern)

    def match(m: str, path: str, data: dict) -> bool:
        return m == method and bool(rx.search(path.split("?")[0])) and all(data.get(k) == v for k, v in body.items())
    return match


# ---------------------------------------------------------------- the service as a real process

class ServiceProc:
    """`python -m hippocampus --config <yaml>`, killed with SIGKILL and restarted on the same state."""

    def __init__(self, tmp_path: Path, memory_url: str, model_url: str, **blocks):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.state_path = tmp_path / "state" / "state.json"
        cfg = {"server": {"port": self.port},
               "memory": {"url": memory_url, "timeout_seconds": 10},
               "model": {"url": model_url, "timeout_seconds": 30},
               "sleep": {"mode": "external", "state_path": str(self.state_path), "promote_min_evidence": 2,
                         "max_attempts": 3, "nudge_wait_seconds": 0},
               "supervisor": {"backoff_seconds": 0.05, "check_seconds": 0.05}}
        for block, values in blocks.items():
            cfg[block] = {**cfg.get(block, {}), **values}
        self.yaml = tmp_path / "seren-hippocampus.yaml"
        self.yaml.write_text(json.dumps(cfg, indent=1), encoding="utf-8")      # JSON is yaml
        self.log = tmp_path / "service.log"
        self.p: Optional[subprocess.Popen] = None
        self.starts = 0

    def start(self) -> "ServiceProc":
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS")}
        with open(self.log, "ab") as out:
            out.write(f"\n===== start {self.starts + 1} =====\n".encode())
            out.flush()
            self.p = subprocess.Popen([sys.executable, "-m", "hippocampus", "--config", str(self.yaml)],
                                      cwd=str(ROOT), env=env, stdout=out, stderr=subprocess.STDOUT)
        self.starts += 1

        def up():
            assert self.p.poll() is None, f"the service exited {self.p.returncode}:\n{self.tail()}"
            try:
                return requests.get(self.url + "/health", timeout=2).status_code == 200
            except requests.RequestException:
                return False
        wait_for(up, timeout=60, interval=0.05, what="the service process to answer")
        return self

    def tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def kill(self) -> None:
        self.p.send_signal(signal.SIGKILL)
        self.p.wait(15)
        assert self.p.returncode == -signal.SIGKILL

    def nudge(self) -> None:
        r = requests.post(self.url + "/nudge", timeout=10)
        assert r.status_code == 200, r.text

    def events(self, type_: Optional[str] = None) -> list:
        params = {"limit": 1000, **({"type": type_} if type_ else {})}
        return requests.get(self.url + "/events", params=params, timeout=10).json()["entries"]

    def status(self) -> dict:
        r = requests.get(self.url + "/status", timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def stop(self) -> None:
        if self.p is not None and self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(10)
