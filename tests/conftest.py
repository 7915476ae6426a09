"""Shared fixtures: one real SerenMemory per session, a fresh store per test, a fake small model."""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def _compile_bytecode() -> None:
    """The project's modules compiled once, before the run: the suite starts `python -m hippocampus` (and the
    demo, the head trickler) as a process of its own dozens of times, and under PYTHONDONTWRITEBYTECODE=1 each
    one compiled every module again (0.27 s of a 0.57 s start to /health). Up-to-date files are only stat'ed."""
    import compileall

    for folder in ("hippocampus", "actors", "tests/harness", "tests/corpus"):
        compileall.compile_dir(ROOT / folder, quiet=2)
    compileall.compile_file(ROOT / "tests" / "__init__.py", quiet=2)


_compile_bytecode()


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """The test modules' assert-rewritten bytecode kept too: pytest rewrites every test module's asserts at
    collection (about 10 s for this suite on 2 cores) and reads the result back from __pycache__ on the next run,
    but it writes it only where bytecode may be written, so under PYTHONDONTWRITEBYTECODE=1 every run paid the
    10 s again. Written during collection only; a changed test file is rewritten as before (pytest checks its
    mtime and size)."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = before

from tests.harness.fake_model import FakeModel  # noqa: E402
from tests.harness.memory_server import MemoryServer  # noqa: E402
from tests.harness.reviewer import MemoryHand  # noqa: E402


@pytest.fixture(scope="session")
def memory_server(tmp_path_factory):
    srv = MemoryServer(tmp_path_factory.mktemp("memory-boot")).start()
    yield srv
    srv.stop()


@pytest.fixture
def memory(memory_server, tmp_path):
    """A fresh, empty store in the running SerenMemory; returns the server (url, set_lifetimes...)."""
    memory_server.fresh_store(tmp_path / "memory-store")
    return memory_server


@pytest.fixture
def hand(memory) -> MemoryHand:
    return MemoryHand(memory.url)


@pytest.fixture
def fake_model():
    fm = FakeModel().start()
    yield fm
    fm.stop()


@pytest.fixture
def crashes():
    """The test's own crashing children: start_service(cfg, children=crashes.children), then crashes.crash(...)."""
    from tests.harness.crashing import Crashes
    return Crashes()


@pytest.fixture
def make_config(tmp_path, memory):
    """A Config pointed at the test's Memory, its state in tmp_path, external mode, mechanical unless told."""
    from hippocampus import config as cm

    def make(data: dict | None = None, environ: dict | None = None, **sections):
        base = {"memory": {"url": memory.url}, "model": {"url": ""},
                "sleep": {"mode": "external", "state_path": str(tmp_path / "state" / "state.json"),
                          "promote_min_evidence": 2, "max_attempts": 3}}
        for block, values in {**(data or {}), **sections}.items():
            base.setdefault(block, {})
            base[block] = {**base[block], **values}
        cfg = cm.build(base, environ=environ or {})       # the environment only as the test gives it
        assert not cfg.warnings, cfg.warnings
        return cfg
    return make


@pytest.fixture
def start_service():
    """Start the whole service in-process on a port the OS picks; stopped (and checked) at teardown."""
    import pykka

    started = []
    before = set(threading.enumerate())
    actors_before = set(pykka.ActorRegistry.get_all())

    def start(cfg, **kw):
        from hippocampus.service.root import Service

        cfg.server.port = 0
        svc = Service(cfg, **kw).start()
        svc.serve_in_thread()
        started.append(svc)
        return svc
    yield start
    for svc in started:
        svc.request_stop(drain_seconds=5)
        assert svc.wait_stopped(30), "the service did not stop"
    from tests.harness.reviewer import wait_for

    def our_actors():
        return [a for a in pykka.ActorRegistry.get_all() if a not in actors_before]

    def leftovers():
        return [t for t in threading.enumerate()
                if not t.daemon and t.is_alive() and t not in before and t is not threading.main_thread()]
    try:
        wait_for(lambda: not leftovers() and not our_actors(), timeout=10,
                 what="the service's actors and threads to end")
    except (AssertionError, TimeoutError):
        pass
    assert our_actors() == []
    assert not leftovers(), f"non-daemon threads left by this test's service: {leftovers()}"


@pytest.fixture
def make_ctx(make_config):
    """The domain without threads: a Context on the real Memory, a fake clock, state in tmp_path."""
    import time as _time

    from tests.harness.clock import FakeClock
    from hippocampus.cycle.context import Context
    from hippocampus.store.events import FILE_NAME as EVENTS_FILE
    from hippocampus.store.events import EventLog
    from hippocampus.memory import MemoryClient
    from hippocampus.model.client import ModelClient
    from hippocampus.store.state import State

    def make(cfg=None, clock=None, **sections):
        cfg = cfg or make_config(**sections)
        clock = clock or FakeClock(_time.time())
        path = cfg.sleep.resolved_state_path()
        voice = None
        if cfg.voice.enabled:
            from hippocampus.store.voice import VoiceCard
            voice = VoiceCard(path.with_name("voice.json"), cfg.voice.max_chars, clock)
        return Context(cfg=cfg, memory=MemoryClient(cfg.memory.url), state=State(path),
                       events=EventLog(path.with_name(EVENTS_FILE), clock), clock=clock,
                       model=ModelClient(cfg.model) if cfg.model.configured else None, voice=voice)
    return make


def event_types(ctx) -> list:
    return [e["type"] for e in reversed(ctx.events.list(limit=1000))]


# ---------------------------------------------------------------- the descriptor-count guard
# The whole suite runs in one process: a per-test leak of file descriptors (a store, a client, a log
# file left open) once pushed it past 1,024 and killed a select()-based server loop. The count after
# the last test must stay within a margin of the count after the tenth; more fails the run.
FD_MARGIN = 60
FD_BASELINE_AFTER = 10
_fd_counts: list = []


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    _fd_counts.append(_open_fds())


def fd_leak(counts: list, baseline_after: int = FD_BASELINE_AFTER, margin: int = FD_MARGIN):
    """The leak the run shows, as a sentence, or None: the last count against the baseline's."""
    if len(counts) <= baseline_after * 3 or counts[0] < 0:
        return None
    base, last = counts[baseline_after - 1], counts[-1]
    if last - base > margin:
        return (f"open file descriptors grew from {base} after test {baseline_after} to {last} after "
                f"test {len(counts)} (margin {margin}): something a test or the service opens is never "
                f"closed")
    return None


def pytest_terminal_summary(terminalreporter):
    if _fd_counts and _fd_counts[0] >= 0:
        terminalreporter.write_line(f"open file descriptors: first {_fd_counts[0]}, max {max(_fd_counts)}, "
                                    f"last {_fd_counts[-1]} over {len(_fd_counts)} tests")
    leak = fd_leak(_fd_counts)
    if leak:
        terminalreporter.write_line("FAILED descriptor check: " + leak, red=True)


def pytest_sessionfinish(session, exitstatus):
    if fd_leak(_fd_counts) and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
