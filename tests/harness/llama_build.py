"""The real llama-server, built from the source that llama-cpp-python's sdist vendors, into a cache outside
the clone (tests/harness/tiny_gguf.py writes the tiny model it serves in tests).

`python -m tests.harness.llama_build` builds (or finds) the binary and prints its path (and on stderr "from
the cache" or "built in N s"); it exits 0 with a reason on stderr and no path where it cannot be built here
(no compiler, no cmake, no AVX2), so `.ci/run` can say why the real-server tests skip.

The cache is keyed on the sdist's version and the cmake flags, so a later run on the same machine reuses the
binary: $SEREN_LLAMA_CACHE, else ~/.cache/seren-hippocampus/llama-server/<version>-<flags hash>/.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Optional

VERSION = "0.3.36"
SDIST = f"llama_cpp_python-{VERSION}.tar.gz"
FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF",
         "-DGGML_NATIVE=OFF", "-DGGML_BLAS=OFF", "-DGGML_CUDA=OFF", "-DLLAMA_BUILD_TESTS=OFF",
         "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_UI=OFF",
         "-DLLAMA_USE_PREBUILT_UI=OFF")


def cache_root() -> Path:
    env = os.environ.get("SEREN_LLAMA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "seren-hippocampus"


def key() -> str:
    return f"{VERSION}-{hashlib.sha256(' '.join(FLAGS).encode()).hexdigest()[:12]}"


def build_dir() -> Path:
    return cache_root() / "llama-server" / key()


def binary_path() -> Path:
    return build_dir() / "llama-server"


def source_dir() -> Path:
    return cache_root() / "src" / f"llama_cpp_python-{VERSION}"


def why_not() -> Optional[str]:
    """Why llama-server cannot be built (or run) on this machine, or None."""
    for tool in ("cmake", "c++", "cc"):
        if shutil.which(tool) is None:
            return f"no {tool} on this machine"
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        flags = ""
    if flags and "avx2" not in flags:
        return "this processor has no AVX2, which the llama-server build needs"
    return None


def _sdist() -> Path:
    folder = cache_root() / "src"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SDIST
    if not path.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", f"llama-cpp-python=={VERSION}", "--no-deps",
                        "--no-binary", ":all:", "-d", str(folder)], check=True, stdout=subprocess.DEVNULL)
    return path


def vendored() -> Path:
    """llama.cpp's source tree, unpacked once from the sdist."""
    src = source_dir()
    if not (src / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        with tarfile.open(_sdist()) as tar:
            tar.extractall(src.parent)          # noqa: S202 - PyPI's own sdist of a pinned version
    return src / "vendor" / "llama.cpp"


def find_or_build(quiet: bool = True) -> Path:
    """The cached binary, built first if it is not there. Raises RuntimeError with the reason."""
    out = binary_path()
    if out.exists():
        return out
    reason = why_not()
    if reason:
        raise RuntimeError(reason)
    llama = vendored()
    with tempfile.TemporaryDirectory(prefix="llama-build-") as tmp:
        io = dict(stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT) if quiet else {}
        subprocess.run(["cmake", "-S", str(llama), "-B", tmp, *FLAGS], check=True, **io)
        subprocess.run(["cmake", "--build", tmp, "--target", "llama-server", f"-j{os.cpu_count() or 2}"],
                       check=True, **io)
        built = next(Path(tmp).rglob("llama-server"))
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".partial")
        shutil.copy2(built, partial)
        partial.rename(out)                     # never a half-copied binary in the cache
    return out


def main() -> int:
    """Print the binary's path on stdout, and on stderr one line: "from the cache", "built in N s", or why
    it cannot be built (and no path)."""
    cached = binary_path().exists()
    began = time.monotonic()
    try:
        path = find_or_build(quiet="-v" not in sys.argv)
    except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
        print(f"llama-server cannot be built here: {exc}", file=sys.stderr)
        return 0
    print(path)
    print("from the cache" if cached else f"built in {time.monotonic() - began:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
