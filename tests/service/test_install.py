"""Where its users are: the Python it claims, and the family launchers' `python -m seren_hippocampus`."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # From a folder outside the checkout, so only the installed package can answer to the name.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, cwd=str(cwd),
                          env=env, timeout=60)


def test_python_m_seren_hippocampus_runs_what_python_m_hippocampus_runs(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("server: {port: 7999}\nmemory: {url: 'http://127.0.0.1:7420'}\n")
    for args in (("--help",), ("--version",), ("check-config", "--config", str(cfg))):
        ours = _run("seren_hippocampus", *args, cwd=tmp_path)
        theirs = _run("hippocampus", *args, cwd=tmp_path)
        assert ours.returncode == theirs.returncode, (ours.stderr, theirs.stderr)
        assert ours.stdout == theirs.stdout
        assert ours.stdout.strip()
    assert '"port": 7999' in _run("seren_hippocampus", "check-config", "--config", str(cfg), cwd=tmp_path).stdout


def _floor() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'requires-python\s*=\s*">=(\d+\.\d+)"', text).group(1)


def test_the_python_floor_is_the_same_in_pyproject_the_readme_and_the_jetson_page():
    floor = _floor()
    assert sys.version_info >= tuple(int(x) for x in floor.split("."))
    for page in (ROOT / "README.md", ROOT / "deploy" / "jetson" / "README.md"):
        claims = set(re.findall(r"Python (\d+\.\d+) or newer", page.read_text(encoding="utf-8")))
        assert claims == {floor}, f"{page.name} claims {claims}, pyproject.toml says >={floor}"
    jetson = (ROOT / "deploy" / "jetson" / "README.md").read_text(encoding="utf-8")
    assert f"the system Python is {floor}" in jetson      # JetPack 6's Python is the floor itself


def test_every_package_of_the_source_is_in_pyproject_s_package_list():
    """An explicit list forgets a new package silently: an editable install still works, a wheel does not."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    listed = set(re.findall(r'"([a-z_][a-z_.]*)"', text.split("packages = [", 1)[1].split("]", 1)[0]))
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("hippocampus", "actors")
             for p in (ROOT / top).rglob("__init__.py")}
    found = {"seren_hippocampus" if f == "hippocampus.launcher" else f for f in found}
    assert found <= listed, f"missing from pyproject.toml's packages: {sorted(found - listed)}"
