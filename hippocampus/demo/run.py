"""`seren-hippocampus demo [--once] [--scripted-model] [--port 7424]`: one whole sleep cycle, narrated.

A throwaway SerenMemory in this process, seeded; the hippocampus (mechanical, or a scripted small model) sleeps,
the draft is reviewed through Memory's routes with one operation denied, then redrafted (scripted) or the chain
ends, and what landed is shown. --once exits then; else it serves the viewer until Ctrl-C.
"""
from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Optional

import requests

from hippocampus import config as config_mod
from hippocampus.demo.fake_model import NO_OPERATIONS, FakeModel
from hippocampus.demo.memory_server import MemoryHand, MemoryServer, quiet_memory_env
from hippocampus.demo.waiting import wait_for
from hippocampus.status.lists import event_say

DAY = 86400.0
MODEL_NAME = "scripted-small-model"

# (topic, fragments): a few days of life, and a one-off
FRAGMENTS = [
    ("tea", ["We drank green tea on the porch in the afternoon",
             "Green tea again after lunch, with a little honey this time",
             "Made a pot of green tea for the long afternoon call",
             "Afternoon tea break: sencha, the good tin"]),
    ("garden, roses", ["The first roses opened in the garden by the gate",
                       "Watered the rose garden before work",
                       "Pruned the climbing rose that leans over the gate"]),
    ("sourdough, baking", ["Baked a sourdough loaf; the crust cracked nicely",
                           "Fed the sourdough starter before bed",
                           "Gave a sourdough loaf to the neighbours"]),
    ("weather", ["It rained hard for ten minutes at noon"]),
]
BRIEF = ("This week the afternoon tea ritual, the rose garden and the sourdough mattered; "
         "the rain at noon was a one-off.")
PROMOTE = ["tea", "garden", "sourdough"]
NOISE = ["weather"]
STATEMENTS = {
    "tea": "Afternoon green tea is a daily ritual, often on the porch.",
    "garden": "The garden has roses.",
    "sourdough": "Sourdough loaves are baked at home; the starter is fed before bed, a loaf given to the "
                 "neighbours.",
}
CRITIQUE = ("Too thin: it is our rose garden by the gate and it bloomed early; "
            "say: The rose garden by the gate is tended with care and bloomed early this year.")


class Narrator:
    """Prints progress lines with the time since the start, and the hippocampus's events as they happen."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.seen: list = []
        self._cond = threading.Condition()

    def say(self, line: str) -> None:
        print(f"[{time.monotonic() - self.t0:6.1f}s] {line}", flush=True)

    def on_event(self, e: dict) -> None:
        with self._cond:
            self.seen.append(e)
            self._cond.notify_all()
        self.say(f"  event {e.get('type')}: {describe_event(e)}")

    def wait_event(self, type_: str, after: int = 0, timeout: float = 30.0) -> dict:
        with self._cond:
            hit = self._cond.wait_for(lambda: next((e for e in self.seen[after:] if e.get("type") == type_), None),
                                      timeout)
        if hit is None:
            raise TimeoutError(f"no {type_} event within {timeout:.0f} s")
        return hit


_EVENT_WORDS = {
    "draft_submitted": lambda e: (f"draft {e.get('draft_id')} with {e.get('operations')} operation(s), "
                                  "waiting for review"),
    "sleep_done": lambda e: f"the sleep is done ({e.get('operations')} operation(s) drafted)",
    "tend_resubmitted": lambda e: (f"redraft {e.get('draft_id')} (attempt {e.get('attempt')}"
                                   f"{', terminal' if e.get('terminal') else ''}) "
                                   f"with {e.get('operations')} operation(s)"),
    "chain_ended": lambda e: (f"the chain ends with {e.get('denied')} operation(s) still denied "
                              f"({e.get('why') or 'no redraft'})"),
    "chain_closed": lambda e: f"chain {e.get('cluster_id')} closed after {e.get('attempts')} attempt(s)",
    "brief_consumed": lambda e: f"brief {e.get('brief_id')} consumed",
    "catch_up": lambda e: "no sleep on record yet, so this one catches up",
    "nudged": lambda e: "a nudge: the hippocampus takes its turn",
}


def describe_event(e: dict) -> str:
    """The demo's own sentence for the events it walks through; any other in the viewer's words, never raw fields."""
    words = _EVENT_WORDS.get(e.get("type"))
    if words is not None:
        return words(e)
    say = event_say(e)
    return " · ".join(w for w in (say["facts"], e.get("error") or e.get("why"), say["outcome"]) if w) or "-"


def seed(hand: MemoryHand, now: float) -> tuple:
    for topic, lines in FRAGMENTS:
        for i, text in enumerate(lines):
            hand.short(text, topic=topic, ts=now - (3 - i * 0.8) * DAY + i * 3600)
    return sum(len(lines) for _, lines in FRAGMENTS), hand.brief(BRIEF, promote=PROMOTE, noise=NOISE)


def scripted_reply(body: dict) -> str:
    """One new_core per topic (from STATEMENTS); a redraft says the critique's words after 'say:', or withdraws."""
    messages = body.get("messages") or []
    prompt = messages[-1].get("content", "") if messages else ""
    core = {"kind": "new_core", "fragments": re.findall(r"^\[(f\d+)\]", prompt, flags=re.M), "target": None}
    if "THE CRITIQUE:" in prompt:
        critique = prompt.split("THE CRITIQUE:", 1)[1].strip().splitlines()[0]
        m = re.search(r"say:\s*(.+)", critique)
        if not m:
            return NO_OPERATIONS
        core.update(content=m.group(1).strip(), rationale="as the critique says")
    else:
        found = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
        topic = found.group(1).strip() if found else "untagged"
        content = next((text for word, text in STATEMENTS.items() if word in topic.lower()),
                       f"Something that keeps coming back: {topic}.")
        core.update(content=content, topic=topic, rationale="the fragments agree")
    return json.dumps({"operations": [core]})


def show_draft(say, draft: dict) -> None:
    say(f"draft {draft['id']} (attempt {draft.get('attempt', 1)}"
        f"{', terminal' if draft.get('terminal') else ''}):")
    for op in draft.get("operations") or []:
        say(f"    op {op['index']}: {op.get('kind')} [{op.get('topic') or 'untagged'}] {op.get('content')!r} "
            f"({len(op.get('source_short_ids') or [])} fragment(s))")


def review_first(say, hand: MemoryHand, draft: dict) -> None:
    """Approve every operation but the garden one, denied with a critique."""
    ops = draft.get("operations") or []
    deny = next((o for o in ops if "garden" in (o.get("topic") or "") or "rose" in (o.get("content") or "").lower()),
                ops[-1] if len(ops) > 1 else None)
    decisions = []
    for op in ops:
        if deny is not None and op["index"] == deny["index"]:
            decisions.append({"op": op["index"], "verdict": "deny", "critique": CRITIQUE})
            say(f"  deny    op {op['index']} with the critique: {CRITIQUE!r}")
        else:
            decisions.append({"op": op["index"], "verdict": "approve"})
            say(f"  approve op {op['index']} ({op.get('topic') or 'untagged'})")
    res = hand.review(draft["id"], decisions)
    say(f"  Memory: {res.get('approved')} approved (written to long-term now), {res.get('denied')} denied")


def cycle(say, narrator: Narrator, hand: MemoryHand, base: str, scripted: bool) -> None:
    say("sleep: a brief is waiting, so the check sleeps now -> POST /check")
    r = requests.post(base + "/check", timeout=120)
    r.raise_for_status()
    report = r.json()
    if report.get("status") != "sleeping" or not (report.get("sleep") or {}).get("draft_id"):
        raise RuntimeError(f"the check did not sleep: {report}")
    first = hand.draft(report["sleep"]["draft_id"])
    show_draft(say, first)
    say("review: the main model reviews the draft through Memory's routes -> POST /drafts/{id}/review")
    review_first(say, hand, first)
    mark = len(narrator.seen)
    say("nudge: the review is done -> POST /nudge")
    requests.post(base + "/nudge", timeout=10).raise_for_status()
    if scripted:
        resub = narrator.wait_event("tend_resubmitted", after=mark)
        second = hand.draft(resub["draft_id"])
        say("redraft: the small model rewrote the denied operation from the critique")
        show_draft(say, second)
        say("review: the redraft says what the critique asked -> approve it")
        res = hand.review(second["id"], [{"op": o["index"], "verdict": "approve"} for o in second["operations"]])
        say(f"  Memory: {res.get('approved')} approved")
        mark = len(narrator.seen)
        say("nudge -> POST /nudge")
        requests.post(base + "/nudge", timeout=10).raise_for_status()
    else:
        say("mechanical mode: no model to redraft the denied operation, so the chain ends without it")
    narrator.wait_event("chain_closed", after=mark)
    entries = hand.long()
    say(f"landed: {len(entries)} long-term memories (GET /long on SerenMemory):")
    for e in entries:
        say(f"    * [{(e.get('metadata') or {}).get('topic') or 'untagged'}] {e.get('content')}")
    show_quality(say, base)
    say(f"the whole cycle ran: sleep, draft, review, {'redraft, review' if scripted else 'chain end'}, landing")


def show_quality(say, base: str) -> None:
    """What GET /quality says once the background read has seen the landed chain."""
    from hippocampus.replay.quality import group_words

    def settled():
        rep = requests.get(base + "/quality", timeout=10).json()
        return rep if rep.get("ready") and rep.get("chains") and not rep["total"].get("waiting") else None
    rep = wait_for(settled, timeout=30, interval=0.1, what="the quality report")
    say("quality (GET /quality, read from Memory's drafts in the background):")
    for g in rep["groups"]:
        say("    " + group_words(g))
    words = ", ".join(f"{w} ({n})" for w, n in rep["total"].get("critique_words") or [])
    say("    the critiques' most common words: " + (words or "none"))


def _start_service(tmp: Path, port: int, memory_url: str, model: Optional[FakeModel]):
    """The hippocampus in external mode (the demo drives it), listening; None (having said why) if the port is taken."""
    from hippocampus.service.root import Service

    cfg = config_mod.build({
        "server": {"host": "127.0.0.1", "port": port},
        "memory": {"url": memory_url},
        "model": {"url": model.url if model else "", "name": MODEL_NAME},
        "sleep": {"mode": "external", "state_path": str(tmp / "hippocampus" / "state.json"),
                  "max_attempts": 3, "nudge_wait_seconds": 1},
        "ripple": {"type": ""},
    }, environ={})                      # port 0: any free port (run() has refused one out of range)
    service = Service(cfg)
    try:
        service.start()
    except OSError as exc:
        service.runtime.stop()
        print(f"the hippocampus could not listen on port {port} ({exc}): try --port 0", file=sys.stderr)
        return None
    return service


def _serve_until_stopped(say, url: str) -> None:
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, f: stop.set())
    print(f"serving: viewer {url}/viewer (Ctrl-C stops everything and removes the temporary store)", flush=True)
    while not stop.wait(0.5):       # a short wait, so Ctrl-C is heard on every platform
        pass
    say("stopping")


OTHER_PROGRAMS = ("uvicorn", "uvicorn.error", "uvicorn.access", "chromadb", "seren_memory", "seren-memory",
                  "seren-memory.requests", "seren_sinew", "seren_meninges", "httpx", "mcp")


def _quiet_other_programs() -> None:
    """The narration alone on the console: the hippocampus says only warnings, the programs it runs on (SerenMemory,
    its request log, uvicorn, chromadb) only errors, and no library's Python warnings."""
    warnings.simplefilter("ignore")
    for name in ("hippocampus", "actors", "waitress"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in OTHER_PROGRAMS:
        logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def _their_prints(quiet: bool):
    """What SerenMemory prints as it starts and stops ("[seren-memory] store ready ...") kept off the narration;
    shown on stderr if the start fails. The narration prints nothing meanwhile (it waits for Memory)."""
    held = io.StringIO()
    try:
        with contextlib.redirect_stdout(held) if quiet else contextlib.nullcontext():
            yield
    except BaseException:
        sys.stderr.write(held.getvalue())
        raise


def _port_refused(port: int) -> bool:
    """--port outside server.port's range, said (before anything starts)."""
    rule = config_mod.schema.ServerConfig.__dataclass_fields__["port"].metadata
    problem = config_mod.loader.out_of_range(port, rule["min"], rule["max"])
    if problem:
        print(f"seren-hippocampus demo: --port {problem}, not {port}", file=sys.stderr)
    return bool(problem)


def run(once: bool = False, scripted_model: bool = False, port: int = 7424) -> int:
    if _port_refused(port):
        return 2
    quiet_memory_env()
    try:
        import seren_memory  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        print(f"the demo needs the [dev] extra (SerenMemory and uvicorn): pip install 'seren-hippocampus[dev]' "
              f"({exc})", file=sys.stderr)
        return 2
    quiet = logging.getLogger().getEffectiveLevel() >= logging.INFO      # unless --log-level DEBUG asked for it all
    if quiet:
        _quiet_other_programs()
    narrator = Narrator()
    say = narrator.say
    tmp = Path(tempfile.mkdtemp(prefix="seren-hippocampus-demo-"))
    memory: Optional[MemoryServer] = None
    model: Optional[FakeModel] = None
    svc = None
    try:
        say(f"starting a throwaway SerenMemory (store in {tmp})")
        with _their_prints(quiet):
            memory = MemoryServer(tmp / "memory").start()
        if quiet:
            _quiet_other_programs()           # again: Memory's request log takes its level as it starts
        hand = MemoryHand(memory.url)
        n, brief_id = seed(hand, time.time())
        say(f"SerenMemory on {memory.url}: seeded {n} fragments over 3 days on {len(FRAGMENTS)} topics, "
            f"and brief {brief_id}")
        if scripted_model:
            model = FakeModel(responder=scripted_reply, model_name=MODEL_NAME).start()
            say(f"scripted small model on {model.url}")
        svc = _start_service(tmp, port, memory.url, model)
        if svc is None:
            return 2
        svc.runtime.events.subscribe(narrator.on_event)
        svc.serve_in_thread()
        say(f"hippocampus on {svc.url} ({'scripted small model' if model else 'mechanical mode'}, "
            f"external mode: the demo drives it)")
        print(f"viewer: {svc.url}/viewer", flush=True)
        cycle(say, narrator, hand, svc.url, scripted=bool(model))
        if not once:
            _serve_until_stopped(say, svc.url)
        return 0
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - the demo says what went wrong, then cleans up
        print(f"the demo failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    finally:
        if svc is not None:
            svc.request_stop(drain_seconds=5)
            svc.wait_stopped(30)
        for running in (model, memory):
            if running is not None:
                with _their_prints(quiet):
                    running.stop()
        shutil.rmtree(tmp, ignore_errors=True)
