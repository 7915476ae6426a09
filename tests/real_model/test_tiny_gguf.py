"""The tiny model is written deterministically and cached: the same seed gives the same bytes."""
from __future__ import annotations

import hashlib

import pytest

from tests.harness import tiny_gguf


@pytest.fixture(autouse=True)
def _needs_gguf():
    pytest.importorskip("gguf", reason="llama.cpp's gguf-py is not installed: "
                        "pip install <cache>/src/llama_cpp_python-*/vendor/llama.cpp/gguf-py")


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = tiny_gguf.write(tmp_path / "a.gguf", seed=3)
    b = tiny_gguf.write(tmp_path / "b.gguf", seed=3)
    c = tiny_gguf.write(tmp_path / "c.gguf", seed=4)
    assert digest(a) == digest(b)
    assert digest(a) != digest(c)
    assert 4_000_000 < a.stat().st_size < 6_000_000        # ~5 MB: phi-3's 32064-token vocab x 64, f16


def test_cached_model_is_reused_and_keyed_on_seed(tmp_path):
    first = tiny_gguf.tiny_model(seed=5, folder=tmp_path)
    stamp = first.stat().st_mtime_ns
    assert tiny_gguf.tiny_model(seed=5, folder=tmp_path) == first
    assert first.stat().st_mtime_ns == stamp                # reused, not rewritten
    assert tiny_gguf.tiny_model(seed=6, folder=tmp_path) != first
    assert not list(tmp_path.glob("*.partial"))


def test_model_carries_phi3_tokenizer_and_chat_template(tiny_model):
    import gguf
    path = tiny_model
    fields = gguf.GGUFReader(str(path)).fields
    vocab = gguf.GGUFReader(str(tiny_gguf.vocab_path())).fields
    assert fields["general.architecture"].contents() == "llama"
    assert fields["llama.block_count"].contents() == 2
    assert fields["tokenizer.chat_template"].contents() == vocab["tokenizer.chat_template"].contents()
    assert len(fields["tokenizer.ggml.tokens"].data) == len(vocab["tokenizer.ggml.tokens"].data)
