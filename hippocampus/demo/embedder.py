"""The offline embedder a throwaway SerenMemory stores with: deterministic, no model download."""
from __future__ import annotations

import math
import re
import zlib

DIM = 64
_TOKEN = re.compile(r"[a-z0-9]+")


def embed_text(text: str) -> list:
    """A hashed bag of words: lower-cased [a-z0-9]+ tokens, crc32 into 64 buckets, L2-normalised."""
    v = [0.0] * DIM
    for tok in _TOKEN.findall((text or "").lower()):
        v[zlib.crc32(tok.encode()) % DIM] += 1.0
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0:
        v[0] = 1.0
        return v
    return [x / norm for x in v]


def hash_embedder():
    """A chromadb EmbeddingFunction over embed_text (chromadb is imported here, when it is first needed)."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class HashEmbedder(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            pass

        @staticmethod
        def name() -> str:
            return "hippocampus-demo-hash"

        def get_config(self) -> dict:
            return {}

        @classmethod
        def build_from_config(cls, config: dict) -> "HashEmbedder":
            return cls()

        def __call__(self, input: Documents) -> Embeddings:  # noqa: A002 - chromadb's name
            return [embed_text(t) for t in input]

    return HashEmbedder()
