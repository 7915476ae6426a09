"""The scripted main model: what a Claude Code session woken by the ripple does, and nothing more.

It acts only through Memory's own routes - GET /short and /near to see what is there, POST /brief
(submit_brief: a summary, promote and noise hints, completed intents), GET /drafts/{id}?review=true
(get_draft), POST /drafts/{id}/review (review_draft: approve, deny with a critique, approve with its
own edits on the terminal attempt) - then the nudge: POST /nudge, or the MCP `nudge` tool through the
SDK's client. Like a session it first reviews whatever waits (the review note in near-term says so).

It is sometimes slow (seconds) and now and then never answers at all; a fault can make the next
wake-up hang until the ripple's timeout kills it. Every wake-up is written to wakeups.jsonl in the
world folder, with the stand-in model processes that were up at that moment (the handover check).

    python -m tests.soak.main_model WORLD_DIR      # the script ripple's command (the event in env)
"""
from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Optional

import requests

from tests.soak.procs import standin_pids

HANG_FLAG = "hang_next"


def load_world(world_dir: Path) -> dict:
    return json.loads((Path(world_dir) / "world.json").read_text(encoding="utf-8"))


def _log(world_dir: Path, **fields) -> None:
    with open(Path(world_dir) / "wakeups.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(fields, default=str) + "\n")


def _tag(text: str) -> str:
    m = re.search(r"\bnight \d+\b", text or "")
    return m.group(0) if m else "lately"


class Session:
    """One woken session. by: script | endpoint (woken by the hippocampus) | session (the person's own)."""

    def __init__(self, world_dir: Path, event: dict, by: str):
        self.dir = Path(world_dir)
        self.w = load_world(self.dir)
        self.event, self.by = event, by
        self.mem = self.w["memory_url"].rstrip("/")
        self.svc = self.w["service_url"].rstrip("/")
        self.http = requests.Session()
        key = f"{self.w['seed']}:{event.get('type')}:{event.get('seq')}:{event.get('draft_id')}:{by}"
        self.rng = random.Random(key)
        self.record: dict = {"by": by, "event": event.get("type"), "seq": event.get("seq"),
                             "draft_id": event.get("draft_id"), "pid": os.getpid(), "reviews": [], "brief": None,
                             "nudged": False, "fate": "answers"}

    # ------------------------------------------------------------ Memory's routes
    def _req(self, method: str, base: str, path: str, **kw) -> requests.Response:
        return self.http.request(method, base + path, timeout=20, **kw)

    def _json(self, method: str, path: str, **kw):
        r = self._req(method, self.mem, path, **kw)
        r.raise_for_status()
        return r.json()

    # ------------------------------------------------------------ the session
    def run(self) -> dict:
        self.record.update(t=time.time(), phase="wake", model_pids=standin_pids(self.w["model_path"]))
        _log(self.dir, **self.record)
        if self.by != "session" and self._take_hang_flag():
            self.record["fate"] = "hangs"
            _log(self.dir, **{**self.record, "phase": "hang"})
            time.sleep(3600)                       # killed by the ripple's timeout
        moods = self.w.get("moods", {})
        silent_p = moods.get("silent", 0.0) if self.by != "session" else 0.0
        if self.rng.random() < silent_p:
            self.record["fate"] = "silent"         # never answers: the brief gate must ask again later
            return self._done()
        if self.rng.random() < moods.get("slow", 0.0):
            lo, hi = moods.get("slow_seconds", [1.0, 3.0])
            self.record["fate"] = "slow"
            time.sleep(self.rng.uniform(lo, hi))
        try:
            self.review_pending()
            if self.event.get("type") == "brief_unmatched" or (
                    self.event.get("type") == "brief_requested" and self._brief_wanted()):
                self.write_brief()
            self.nudge()
        except requests.RequestException as exc:   # Memory or the service down mid-session: it gives up
            self.record["error"] = f"{type(exc).__name__}: {exc}"[:300]
        return self._done()

    def _done(self) -> dict:
        self.record.update(phase="done", end=time.time())
        _log(self.dir, **self.record)
        return self.record

    def _take_hang_flag(self) -> bool:
        flag = self.dir / HANG_FLAG
        try:
            flag.unlink()
            return True
        except FileNotFoundError:
            return False

    def _brief_wanted(self) -> bool:
        """sleep_status, as a session asks it: does the hippocampus still want a brief?"""
        r = self._req("GET", self.svc, "/status")
        return r.status_code == 200 and bool(r.json().get("brief_wanted"))

    # ------------------------------------------------------------ the brief
    def write_brief(self) -> str:
        shorts = self._json("GET", "/short", params={"limit": 1000})["entries"]
        present = {(s.get("metadata") or {}).get("topic") for s in shorts}
        bits = [t for t in self.w["running_bits"] if t in present] or list(self.w["running_bits"])
        done = [n for n in self._json("GET", "/near")["entries"]
                if (n.get("metadata") or {}).get("topic") == self.w["errand_topic"]]
        for n in done:
            self._json("POST", f"/near/{n['id']}/complete")
        night = max((int(m.group(1)) for s in shorts for m in [re.search(r"night (\d+)", s.get("content", ""))]
                     if m), default=0)
        body = {"summary": f"Night {night}: {', '.join(bits)} kept coming up; the {self.w['noise_topic']} "
                           "was noise again.",
                "promote_hints": bits, "noise_hints": [self.w["noise_topic"]],
                "completed_intents": [n.get("content", "") for n in done]}
        bid = self._json("POST", "/brief", json=body)["id"]
        self.record["brief"] = bid
        return bid

    # ------------------------------------------------------------ the review
    def review_pending(self) -> None:
        pending = self._json("GET", "/drafts", params={"status": "pending", "limit": 200})["entries"]
        for d in sorted(pending, key=lambda d: float(d.get("created_at") or 0)):
            view = self._json("GET", f"/drafts/{d['id']}", params={"review": "true"})
            decisions = self.decide(view)
            if not decisions:
                continue
            r = self._req("POST", self.mem, f"/drafts/{d['id']}/review", json={"decisions": decisions})
            if r.status_code == 409:
                continue                           # another session got there first
            if r.status_code == 400 and "no long-term entry" in r.text:
                # a core it names was forgotten after the draft was written: as a reviewer would, deny
                # what can no longer land (Memory refuses approving it) and review the rest
                decisions = self.deny_gone(view, decisions)
                r = self._req("POST", self.mem, f"/drafts/{d['id']}/review", json={"decisions": decisions})
            r.raise_for_status()
            self.record["reviews"].append({
                "draft_id": d["id"], "attempt": view.get("attempt"), "terminal": bool(view.get("terminal")),
                "approved": sum(1 for x in decisions if x["verdict"] == "approve"),
                "denied": sum(1 for x in decisions if x["verdict"] == "deny"),
                "edited": sum(1 for x in decisions if x.get("edited_content"))})

    def deny_gone(self, view: dict, decisions: list) -> list:
        gone = set()
        for op in view.get("operations", []):
            target = op.get("target_core_id")
            if target and self._req("GET", self.mem, f"/memory/{target}").status_code == 404:
                gone.add(op["index"])
        return [{"op": x["op"], "verdict": "deny", "critique": "its core was forgotten; this cannot land"}
                if x["op"] in gone else x for x in decisions]

    def decide(self, view: dict) -> list:
        moods = self.w.get("moods", {})
        rng = random.Random(f"{self.w['seed']}:{view['id']}")
        terminal, attempt = bool(view.get("terminal")), int(view.get("attempt") or 1)
        out = []
        for op in view.get("operations", []):
            if op.get("status", "pending") != "pending":
                continue
            i, kind, topic = op["index"], op.get("kind"), op.get("topic") or "untagged"
            d: dict = {"op": i, "verdict": "approve"}
            if kind == "attach" and op.get("restated_content"):
                d["restate"] = False
            roll = rng.random()
            if not terminal and roll < moods.get("deny", 0.3):
                tag = _tag(op.get("content", ""))
                said = (f"Another episode of {topic}, {tag}, as it happened (take {attempt + 1})"
                        if kind == "attach" else f"{topic} is a running bit, kept {tag}, in my words (take {attempt + 1})")
                d = {"op": i, "verdict": "deny", "critique": f"not quite; say: {said}"}
            elif terminal and roll < moods.get("terminal_deny", 0.1):
                d = {"op": i, "verdict": "deny", "critique": "a duplicate of what I already keep"}
            elif terminal and op.get("redraft_of") is not None and roll < 0.8:
                d["edited_content"] = (op.get("content") or topic) + " - as I remember it"
            out.append(d)
        # Memory refuses an approved attach to a new core (target_op) that is denied: deny it with its core
        by_op = {d["op"]: d for d in out}
        for op in view.get("operations", []):
            t = op.get("target_op")
            mine = by_op.get(op["index"])
            if t is not None and mine and mine["verdict"] == "approve" and by_op.get(t, {}).get("verdict") == "deny":
                by_op[op["index"]] = {"op": op["index"], "verdict": "deny",
                                      "critique": f"its core was denied; say: {op.get('content') or 'an episode'}"}
        return [by_op[d["op"]] for d in out]

    # ------------------------------------------------------------ the nudge
    def nudge(self) -> None:
        if self.w.get("nudge") == "mcp":
            self.record["nudged"] = mcp_nudge(self.svc + "/mcp")
        else:
            self.record["nudged"] = self._req("POST", self.svc, "/nudge").status_code == 200


def mcp_nudge(url: str) -> bool:
    """The MCP `nudge` tool, through the SDK's own client (what Claude Code's MCP client calls)."""
    import asyncio

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def go() -> bool:
        async with httpx2.AsyncClient(timeout=20) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                res = await client.call_tool("nudge", {})
                return not res.is_error
    try:
        return asyncio.run(asyncio.wait_for(go(), 30))
    except Exception:  # noqa: BLE001 - a nudge that did not reach: the tick is the safety net
        return False


def main(argv: list) -> int:
    world_dir = Path(argv[0])
    event = json.loads(os.environ.get("SEREN_RIPPLE_JSON") or "{}")
    event.setdefault("type", os.environ.get("SEREN_RIPPLE_EVENT"))
    Session(world_dir, event, "script").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
