"""The card's shape, held (issue 42): a tick runs on at most two threads (the chain's, then the sleeper's), never
on the scheduler's, which only tells; no actor is reached by a name written out, except in the supervisor; nothing
outside actors/ builds an actor's messages; the product ships no fault hook (a test hands the supervisor its own
crashing child)."""
from __future__ import annotations

import ast
import threading
from pathlib import Path

import requests

from actors.runtime import CHILDREN
from hippocampus.cycle import executor
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
NAMES = {cls.name for cls in CHILDREN}


def product():
    for path in sorted([*ROOT.glob("hippocampus/**/*.py"), *ROOT.glob("actors/**/*.py")]):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_no_actor_is_reached_by_a_name_written_out_outside_the_supervisor():
    """A call given a child's name as a string reaches that actor; only the board's get and put (what an actor
    published) may, getattr (another object's attribute), and the status's words (what a person reads)."""
    found = []
    for path, tree in product():
        if path == ROOT / "actors" / "supervisor.py" or path.parent == ROOT / "hippocampus" / "status":
            continue
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            named = [a.value for a in [*call.args, *(k.value for k in call.keywords)]
                     if isinstance(a, ast.Constant) and a.value in NAMES]
            f = call.func
            board = isinstance(f, ast.Attribute) and f.attr in ("get", "put") and "registry" not in ast.unparse(f)
            command = isinstance(f, ast.Attribute) and f.attr == "add_parser"     # `replay`: a CLI command too
            if named and not board and not command and not (isinstance(f, ast.Name) and f.id == "getattr"):
                found.append(f"{path.relative_to(ROOT)}:{call.lineno}: {ast.unparse(call)[:80]}")
    assert found == []


def test_nothing_outside_actors_imports_actor_messages_and_no_fault_hook_ships():
    found = []
    for path, tree in product():
        for n in ast.walk(tree):
            mods = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                [n.module or ""] if isinstance(n, ast.ImportFrom) else []
            if path.parts[len(ROOT.parts)] != "actors" and any(m.startswith("actors.messages") for m in mods):
                found.append(f"{path.relative_to(ROOT)}:{n.lineno}")
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in ("inject_fault", "Crash", "FaultsOff"):
                found.append(f"{path.relative_to(ROOT)}:{n.lineno}: {n.name}")
    assert found == [] and not (ROOT / "actors" / "faults.py").exists()


def test_the_scheduler_only_tells_and_no_closure_crosses_an_actor():
    """No ask (a future waited on) in the scheduler; no lambda in the three actors a tick runs through."""
    found = []
    for name in ("scheduler", "chain", "sleeper"):
        path = ROOT / "actors" / f"{name}.py"
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Lambda):
                found.append(f"{name}.py:{n.lineno}: a lambda")
            if name == "scheduler" and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and (
                    n.func.attr == "ask" or any(k.arg == "timeout" for k in n.keywords)):
                found.append(f"{name}.py:{n.lineno}: {ast.unparse(n)[:60]}")
    assert found == []


def test_nothing_calls_back_into_the_scheduler():
    """The scheduler hears only nudges (the door's wake); a tick's end is the board's record (ctx.ticks), and a
    nudge that found the cycle held runs at the first beat that finds it free: no part of a tick, no lock's
    release and no other actor tells the scheduler anything."""
    told = []
    for path, tree in product():
        for n in ast.walk(tree):     # rt.scheduler().<method>, anywhere: only the nudge's wake
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Call) and \
                    isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "scheduler" and n.attr != "wake":
                told.append(f"{path.relative_to(ROOT)}:{n.lineno}: {ast.unparse(n)[:60]}")
    assert told == []
    from actors.scheduler import SchedulerProxy
    assert [m for m in vars(SchedulerProxy) if not m.startswith("_")] == ["wake"]


def test_a_tick_runs_on_the_chain_and_the_sleeper_only(make_config, start_service, monkeypatch):
    """A nudged tick against the test Memory: its read, its decision and its steps run on two threads, the
    chain's then the sleeper's; the scheduler's thread runs none of it."""
    seen: list = []

    def recorded(fn):
        def run(*a, **kw):
            seen.append((fn.__name__, threading.current_thread().name))
            return fn(*a, **kw)
        return run
    for name in ("plan", "check_steps"):
        monkeypatch.setattr(executor, name, recorded(getattr(executor, name)))
    svc = start_service(make_config(sleep={"nudge_wait_seconds": 0}))
    requests.post(svc.url + "/nudge", timeout=5)
    wait_for(lambda: (svc.runtime.board.get("ticks") or {}).get("ticks") == 1, timeout=10, what="the tick")
    assert [what for what, _ in seen] == ["plan", "check_steps"], seen
    threads = [thread for _, thread in seen]
    assert threads[0].startswith("ChainActor") and threads[1].startswith("SleeperActor"), threads
    assert not any(t.startswith("SchedulerActor") for t in threads)
    last = svc.runtime.board.get("ticks")["last_tick"]         # the tick's record, not the scheduler's
    assert last["nudged"] is True and last["tend"] == "ran" and last["check"] == "waiting_for_brief", last
