"""The real SerenMemory, served on a loopback port for a whole test session: the demo's throwaway one.

One server per session; each test gets a fresh store (MemoryServer.fresh_store: a new persist dir and
a new MemoryStore swapped into the running app), so tests never see each other's memories and never
pay for a second server start.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from hippocampus.demo import memory_server as demo
from hippocampus.demo.memory_server import close_store, memory_config, quiet_memory_env  # noqa: F401
from tests.harness.ports import free_port  # noqa: F401

quiet_memory_env()


class MemoryServer(demo.MemoryServer):
    """The demo's server, with what only tests do to it (moved out of the product)."""

    def fresh_store(self, persist_dir: Path, **cfg_kw) -> None:
        """Swap a brand-new store (and config) into the running app; the old store is closed."""
        from seren_memory.collections import MemoryStore

        cfg = memory_config(persist_dir, bearer=self.cfg.server.bearer_token, **cfg_kw)
        old = getattr(self.app.state, "store", None)
        self.app.state.store = MemoryStore(cfg, embedding_function=self.embedder, _allow_reset=True)
        self.app.state.config = cfg
        if old is not None:
            close_store(old)

    def set_lifetimes(self, *, short_term_seconds: Optional[int] = None,
                      pruned_safety_days: Optional[int] = None) -> None:
        cfg = self.app.state.config
        if short_term_seconds is not None:
            cfg.lifetimes.short_term_seconds = short_term_seconds
        if pruned_safety_days is not None:
            cfg.consolidator.pruned_safety_days = pruned_safety_days
