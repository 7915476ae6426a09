"""A tiny llama-architecture GGUF model with random weights, for the real llama-server in tests.

2 layers, embedding 64, 4 heads, feed-forward 128, f16 weights from a seeded generator, the output tied to
the embeddings, and every `tokenizer.*` key (the chat template included) copied from the vocab-only
`models/ggml-vocab-phi-3.gguf` that llama.cpp's source ships. About 5 MB, written in a few seconds, the same
bytes for the same seed. It talks nonsense, but the server's grammar still holds it to a JSON schema.

The file is cached beside the binary (<cache>/tiny-models/, keyed on the vocab, the seed and the shape) and
reused when present. `gguf` (llama.cpp's own gguf-py, `pip install <src>/vendor/llama.cpp/gguf-py`) and
numpy are imported only when a model is written, so importing this module costs nothing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tests.harness import llama_build

VOCAB = "ggml-vocab-phi-3.gguf"


@dataclass(frozen=True)
class Shape:
    layers: int = 2
    embedding: int = 64
    heads: int = 4
    feed_forward: int = 128
    context: int = 4096

    def tag(self) -> str:
        return f"l{self.layers}-e{self.embedding}-h{self.heads}-f{self.feed_forward}-c{self.context}"


def vocab_path() -> Path:
    return llama_build.vendored() / "models" / VOCAB


def model_path(seed: int = 0, shape: Shape = Shape(), folder: Path | None = None) -> Path:
    folder = folder or llama_build.cache_root() / "tiny-models"
    return folder / f"tiny-llama-{llama_build.VERSION}-phi3vocab-{shape.tag()}-seed{seed}.gguf"


def tiny_model(seed: int = 0, shape: Shape = Shape(), folder: Path | None = None) -> Path:
    """The cached tiny model for this seed and shape, written first when it is not there."""
    out = model_path(seed, shape, folder)
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f"{out.name}.{os.getpid()}.partial")
    try:
        write(partial, seed, shape)
        partial.replace(out)                    # never a half-written model in the cache
    finally:
        partial.unlink(missing_ok=True)
    return out


def write(path: Path, seed: int = 0, shape: Shape = Shape()) -> Path:
    """Write the model to path, deterministically: the same seed and shape give the same bytes."""
    try:
        import gguf
        import numpy as np
    except ImportError as exc:
        raise RuntimeError(f"the tiny model needs llama.cpp's gguf-py and numpy ({exc}); install them with "
                           f"`pip install numpy {llama_build.vendored() / 'gguf-py'}`") from exc
    vocab = gguf.GGUFReader(str(vocab_path()))
    n_vocab = len(vocab.fields["tokenizer.ggml.tokens"].data)
    rng = np.random.default_rng(seed)
    e, ff = shape.embedding, shape.feed_forward

    def weights(*dims: int) -> "np.ndarray":
        return (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float16)

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"tiny random llama (seed {seed})")
    writer.add_context_length(shape.context)
    writer.add_embedding_length(e)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(ff)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.heads)
    writer.add_rope_dimension_count(e // shape.heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, field in vocab.fields.items():
        if key.startswith("tokenizer."):
            types = field.types
            sub = types[-1] if types[0] == gguf.GGUFValueType.ARRAY else None
            value = field.contents()
            writer.add_key_value(key, value, types[0], sub_type=sub)
    writer.add_tensor("token_embd.weight", weights(n_vocab, e))     # no output.weight: tied to it
    writer.add_tensor("output_norm.weight", np.ones(e, dtype=np.float32))
    for i in range(shape.layers):
        blk = f"blk.{i}"
        writer.add_tensor(f"{blk}.attn_norm.weight", np.ones(e, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{blk}.{name}.weight", weights(e, e))
        writer.add_tensor(f"{blk}.ffn_norm.weight", np.ones(e, dtype=np.float32))
        writer.add_tensor(f"{blk}.ffn_gate.weight", weights(ff, e))
        writer.add_tensor(f"{blk}.ffn_up.weight", weights(ff, e))
        writer.add_tensor(f"{blk}.ffn_down.weight", weights(e, ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


if __name__ == "__main__":
    print(tiny_model())
