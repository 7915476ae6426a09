"""Is what answers at model.url a model server? Only when GET {url}/models is an OpenAI-compatible model list
({"data": [...]}); a status below 500 proves nothing (issue 41): a 404 from something else is no model server,
said with the fix. check-config (cli/identify.py) and the model watch (status/watch.py) read it the same way."""
from __future__ import annotations

from typing import Any

from hippocampus.config import redact

MODEL_EXAMPLE = "http://127.0.0.1:8080/v1"      # llama-server's default port, with the /v1 the service wants


def is_model_list(body: Any) -> bool:
    return isinstance(body, dict) and isinstance(body.get("data"), list)


def not_a_model_server(url: str, status: int, seen: str) -> str:
    """The words for a URL that answers, but not with a model list; seen: what GET {url}/models gave, in words."""
    base = redact.url(url.rstrip("/"))
    return (f"not a model server at model.url {base}: GET {base}/models answered HTTP {status}, {seen}, not a "
            "model list; set model.url to the small model's server, an OpenAI-compatible URL ending in /v1 (e.g. "
            f"llama-server's {MODEL_EXAMPLE}), or leave it blank for mechanical mode")
