"""The demo's script for the fake small model: a small model that follows the prompt contract."""
from __future__ import annotations

import json
import re
from typing import Optional

from hippocampus.demo.fake_model import NO_OPERATIONS


def _markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def scripted_reply(body: dict, statements: Optional[dict] = None) -> str:
    """One new_core per topic (worded from `statements`, keyed by a word of the topic); a redraft takes
    the critique's words after 'say:' as its content, and withdraws when the critique has none."""
    messages = body.get("messages") or []
    prompt = messages[-1].get("content", "") if messages else ""
    frags = _markers(prompt, "f")
    if "THE CRITIQUE:" in prompt:
        critique = prompt.split("THE CRITIQUE:", 1)[1].strip().splitlines()[0]
        m = re.search(r"say:\s*(.+)", critique)
        if not m:
            return NO_OPERATIONS                      # nothing to say instead: withdraw
        return json.dumps({"operations": [{"kind": "new_core", "content": m.group(1).strip(),
                                           "fragments": frags, "target": None,
                                           "rationale": "as the critique says"}]})
    found = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
    topic = found.group(1).strip() if found else "untagged"
    content = next((text for word, text in (statements or {}).items() if word in topic.lower()),
                   f"Something that keeps coming back: {topic}.")
    return json.dumps({"operations": [{"kind": "new_core", "content": content, "topic": topic,
                                       "fragments": frags, "target": None,
                                       "rationale": "the fragments agree"}]})
