"""The deterministic offline embedder for the real SerenMemory in tests (the demo's own)."""
from hippocampus.demo_support import embed_text, hash_embedder  # noqa: F401

DIM = 64


def HashEmbedder():  # noqa: N802 - kept as the name the harness has always used
    return hash_embedder()
