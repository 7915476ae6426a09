"""The shape the code keeps: the two front-ends meet only in the facade, and nothing grows too long."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add("." * node.level + node.module)
    return out


def test_the_front_ends_never_import_each_other_nor_actor_messages():
    for front, other in (("http", "mcp"), ("mcp", "http")):
        for path in (ROOT / "hippocampus" / front).glob("*.py"):
            names = _imports(path)
            assert not [n for n in names if n.startswith(f"hippocampus.{other}") or n == f"..{other}"
                        or n.startswith(f"..{other}.")], f"{path.name} imports hippocampus.{other}"
            assert not [n for n in names if n.startswith("actors")], f"{path.name} imports the actors"


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
