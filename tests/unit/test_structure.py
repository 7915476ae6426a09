"""The shape shows the architecture (ARCHITECTURE.md), read from the source with ast, and nothing grows too long.

- The layers, top down: the composition (__main__, launcher, service/, cli/, demo/), the front-ends
  (http/, mcp/), the door (front.py), the actors (actors/), the plain objects (everything else). An import
  goes down, never up; the two front-ends never import each other.
- A front-end reaches nothing below the door: no actors, no cycle/, store/, model/, and no `.rt`.
- No import cycle between the packages of hippocampus/ and actors/ (a package's own modules are one node).
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = {"hippocampus.__main__", "hippocampus.launcher", "hippocampus.service", "hippocampus.cli", "hippocampus.demo"}
FRONT_ENDS = {"hippocampus.http", "hippocampus.mcp"}
DOOR = {"hippocampus.front"}
ACTORS = {"actors"}
BELOW_THE_DOOR = ("actors", "hippocampus.cycle", "hippocampus.store", "hippocampus.model")


def layer(node: str) -> int:
    for i, nodes in enumerate((TOP, FRONT_ENDS, DOOR, ACTORS)):
        if node in nodes:
            return i
    return 4                                    # the plain objects


def node_of(module: str) -> str:
    """The graph's node for a module: `actors`, or `hippocampus.X` (a package or a flat module), or
    `hippocampus` itself (its __init__: the name and the version)."""
    parts = module.split(".")
    if parts[0] == "actors":
        return "actors"
    if len(parts) > 1 and ((ROOT / "hippocampus" / parts[1]).is_dir() or
                           (ROOT / "hippocampus" / f"{parts[1]}.py").is_file()):
        return f"hippocampus.{parts[1]}"
    return "hippocampus"


def module_of(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imports():
    """(importing module, imported module, where) for every import of our own code in the product."""
    for path in sorted([*ROOT.glob("hippocampus/**/*.py"), *ROOT.glob("actors/**/*.py")]):
        me = module_of(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                base = n.module or ""
                if n.level:
                    up = package.split(".")[: len(package.split(".")) - n.level + 1]
                    base = ".".join(up + ([n.module] if n.module else []))
                names = [base] + [f"{base}.{a.name}" for a in n.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] in ("hippocampus", "actors"):
                    yield me, name, f"{path.relative_to(ROOT)}:{n.lineno}"


def graph() -> dict:
    edges: dict = defaultdict(dict)
    for me, name, where in imports():
        src, dst = node_of(me), node_of(name)
        if src != dst:
            edges[src].setdefault(dst, where)
    return edges


def test_a_front_end_reaches_nothing_below_the_door():
    wrong = [f"{where}: {name}" for me, name, where in imports()
             if node_of(me) in FRONT_ENDS and name.startswith(BELOW_THE_DOOR)]
    assert wrong == []
    touches = [f"{p.relative_to(ROOT)}:{i}" for front_end in ("http", "mcp")
               for p in sorted((ROOT / "hippocampus" / front_end).rglob("*.py"))
               for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"\.rt\b", line)]
    assert touches == [], "a front-end reaches the runtime: it goes through hippocampus/front.py"


def test_imports_go_down_the_layers_and_the_front_ends_never_meet():
    wrong = [f"{where}: {src} -> {dst}" for src, out in graph().items() for dst, where in out.items()
             if layer(dst) < layer(src) or (layer(src) == layer(dst) == 1)]
    assert wrong == []


def test_no_import_cycle_between_packages():
    edges = graph()
    seen, on_path, cycles = set(), [], []

    def visit(node: str) -> None:
        if node in on_path:
            loop = on_path[on_path.index(node):] + [node]
            cycles.append(" -> ".join(f"{a} ({edges[a][b]})" for a, b in zip(loop, loop[1:])))
            return
        if node in seen:
            return
        seen.add(node)
        on_path.append(node)
        for nxt in sorted(edges.get(node, ())):
            visit(nxt)
        on_path.pop()

    for node in sorted(edges):
        visit(node)
    assert cycles == []


def test_the_graph_is_read_at_all():
    """The checks above would pass on an empty graph: the layers they guard are there."""
    edges = graph()
    assert "hippocampus.front" in edges["hippocampus.http"] and "actors" in edges["hippocampus.front"]
    assert "hippocampus.cycle" in edges["actors"] and "hippocampus.http" in edges["hippocampus.service"]


def test_no_function_over_60_lines_and_no_class_over_300():
    long = []
    for top in ("hippocampus", "actors"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                size = (node.end_lineno or 0) - node.lineno + 1 if hasattr(node, "lineno") else 0
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and size > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({size} lines)")
                if isinstance(node, ast.ClassDef) and size > 300:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({size} lines)")
    assert long == []


def test_no_module_over_400_lines():
    """A module a reader takes in whole: the layout's promise (found: drafting/grounding.py had grown to 509)."""
    long = [f"{path.relative_to(ROOT)} ({n} lines)" for top in ("hippocampus", "actors")
            for path in (ROOT / top).rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400]
    assert long == []


# the subcommands' own code: `serve` must start without importing any of it (each subcommand imports its own)
SUBCOMMAND_MODULES = ("hippocampus.cli.commands", "hippocampus.demo.run",
                      "hippocampus.service.winservice")


def test_serve_imports_no_subcommand_module(tmp_path):
    """The real `python -m hippocampus` up to its first /health 200, its imports read from -X importtime."""
    import json
    import os
    import signal
    import socket
    import subprocess
    import sys

    import requests

    from hippocampus.demo.waiting import wait_for

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]                   # Memory is not needed to answer /health
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps({"server": {"port": port}, "memory": {"url": f"http://127.0.0.1:{dead}"},
                               "model": {"url": ""},
                               "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json")}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS_")}
    err = open(tmp_path / "stderr.txt", "wb")
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "hippocampus", "--config", str(cfg),
                             "--log-level", "WARNING"], cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL, stderr=err)

    def healthy():
        assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()[-2000:]
        try:
            return requests.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200
        except requests.RequestException:
            return False
    try:
        wait_for(healthy, timeout=60, interval=0.05, what="the first /health 200")
        imported = {line.rsplit("|", 1)[1].strip() for line in (tmp_path / "stderr.txt").read_text().splitlines()
                    if line.startswith("import time:") and "|" in line}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        err.close()
    assert "hippocampus.service.root" in imported and "hippocampus.cli.flags" in imported   # the log was read
    assert sorted(imported & set(SUBCOMMAND_MODULES)) == []
    assert not [m for m in imported if m.split(".")[0] in ("mcp", "mcp_types", "pydantic")], \
        "serve loaded the MCP SDK before any MCP call"
