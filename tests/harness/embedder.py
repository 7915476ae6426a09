"""The deterministic offline embedder for the real SerenMemory in tests (the demo's own)."""
from hippocampus.demo.memory_server import embed_text  # noqa: F401 - the names tests import from here
from hippocampus.demo.memory_server import hash_embedder as HashEmbedder  # noqa: F401, N812
