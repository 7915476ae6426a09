"""The real SerenMemory, served on a loopback port for a whole test session: the demo's throwaway one.

One server per session; each test gets a fresh store (MemoryServer.fresh_store: a new persist dir and
a new MemoryStore swapped into the running app), so tests never see each other's memories and never
pay for a second server start.
"""
from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Optional

from hippocampus.demo import memory_server as demo
from hippocampus.demo.memory_server import close_store, memory_config, quiet_memory_env  # noqa: F401
from tests.harness.ports import free_port  # noqa: F401

quiet_memory_env()


class _Background(threading.Thread):
    """One call on a daemon thread (never counted as a thread a test's service left), its result or error kept."""

    def __init__(self, fn, *args):
        super().__init__(name="memory-store-ahead", daemon=True)
        self.fn, self.args, self.result, self.error = fn, args, None, None
        self.start()

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, who makes its store itself
            self.error = exc


class MemoryServer(demo.MemoryServer):
    """The demo's server, with what only tests do to it (moved out of the product).

    A new store and the old one's close cost about 0.3 s each, and some 580 tests ask for a fresh store: the next
    empty store is made on a background thread while the current test runs, and the store it replaces is closed on
    one, so a test waits only for what is not ready yet. Each test still gets a store nobody has used."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        boot = Path(self.cfg.storage.persist_dir)
        self._ahead_dir = boot.with_name(boot.name + "-ahead")
        self._numbers = itertools.count(1)
        self._ahead: Optional[_Background] = None
        self._closing: Optional[_Background] = None

    def _new_store(self, persist_dir: Path, **cfg_kw) -> tuple:
        from seren_memory.collections import MemoryStore

        cfg = memory_config(persist_dir, bearer=self.cfg.server.bearer_token, **cfg_kw)
        return cfg, MemoryStore(cfg, embedding_function=self.embedder, _allow_reset=True)

    def _make_ahead(self) -> None:
        self._ahead = _Background(self._new_store, self._ahead_dir / f"store-{next(self._numbers)}")

    def _take_ahead(self) -> Optional[tuple]:
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        ahead.join()
        return ahead.result if ahead.error is None else None

    def fresh_store(self, persist_dir: Path, **cfg_kw) -> None:
        """Swap a brand-new, empty store (and config) into the running app; the old store is closed. Without
        cfg_kw it is the one made ahead (in a folder of the session's, not persist_dir); else, or if making it
        failed, one is made in persist_dir now."""
        made = None if cfg_kw else self._take_ahead()
        cfg, store = made or self._new_store(persist_dir, **cfg_kw)
        old = getattr(self.app.state, "store", None)
        self.app.state.store = store
        self.app.state.config = cfg
        if self._closing is not None:
            self._closing.join()
        self._closing = _Background(close_store, old) if old is not None else None
        if self._ahead is None:
            self._make_ahead()

    def stop(self) -> None:
        for job in (self._closing, self._ahead):
            if job is not None:
                job.join()
        if self._ahead is not None and self._ahead.result is not None:
            close_store(self._ahead.result[1])
        super().stop()

    def set_lifetimes(self, *, short_term_seconds: Optional[int] = None,
                      pruned_safety_days: Optional[int] = None) -> None:
        cfg = self.app.state.config
        if short_term_seconds is not None:
            cfg.lifetimes.short_term_seconds = short_term_seconds
        if pruned_safety_days is not None:
            cfg.consolidator.pruned_safety_days = pruned_safety_days
