"""What makes the tiny random-weight model (tiny_gguf.py) answer a draft the service can use.

Random weights write no JSON on their own. llama-server's own `json_schema` request field turns a schema into
a grammar, so the shape is the grammar's and only the words are the weights' noise: exactly one new_core
citing the first fragment shown ([f1]), its text 12-48 characters (about 60 constrained tokens, well inside
a max_tokens of 400). Every draft prompt and every redraft prompt shows an [f1], so every answer is valid.

    model:
      extra_body: EXTRA_BODY      # the configured model, and a replay candidate's own extra_body
"""
from __future__ import annotations

ONE_NEW_CORE = {
    "type": "object", "additionalProperties": False, "required": ["operations"],
    "properties": {"operations": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
        "type": "object", "additionalProperties": False, "required": ["kind", "content", "fragments"],
        "properties": {"kind": {"enum": ["new_core"]},
                       "content": {"type": "string", "minLength": 12, "maxLength": 48},
                       "fragments": {"type": "array", "minItems": 1, "maxItems": 1,
                                     "items": {"enum": ["f1"]}}}}}}}
EXTRA_BODY = {"json_schema": ONE_NEW_CORE, "chat_template_kwargs": {"enable_thinking": False}}
MAX_TOKENS = 400


def model_block(url: str, **overrides) -> dict:
    """A model block for the tiny model behind `url`: the schema sent, model.structured (where this build has
    it) off so the schema here is the one the server uses."""
    from hippocampus.config.schema import ModelConfig

    block = {"url": url, "max_tokens": MAX_TOKENS, "timeout_seconds": 120, "temperature": 0.2,
             "extra_body": EXTRA_BODY}
    if "structured" in ModelConfig.__dataclass_fields__:
        block["structured"] = "off"
    return {**block, **overrides}
