"""The real SerenMemory, served on a loopback port for a whole test session: the demo's throwaway one.

One server per session; each test gets a fresh store (MemoryServer.fresh_store: a new persist dir and
a new MemoryStore swapped into the running app), so tests never see each other's memories and never
pay for a second server start.
"""
from hippocampus.demo.memory_server import (  # noqa: F401 - the names tests import from here
    MemoryServer, close_store, memory_config, quiet_memory_env)
from hippocampus.demo.waiting import free_port  # noqa: F401

quiet_memory_env()
