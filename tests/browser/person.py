"""The person's view of the page: its visible text with every <details> section left out (ids, the parts'
names and the words of the code live there), and the check that nothing of the code's language is in it."""
from __future__ import annotations

import re

# the visible text, each <details> hidden while it is read (closed or opened by the page itself)
PERSON_TEXT = """() => {
  const ds = Array.from(document.querySelectorAll("details"));
  const was = ds.map(d => d.style.display);
  ds.forEach(d => { d.style.display = "none"; });
  const text = document.body.innerText;
  ds.forEach((d, i) => { d.style.display = was[i]; });
  return text;
}"""
HEX_ID = re.compile(r"\b[0-9a-f]{32}\b|\b[0-9a-f]{8}…|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
ACTOR = re.compile(r"\b(actors?|sleeper|notifier|lifecycle|scheduler|memory_health|model_health|wakeup|queue watch)\b",
                   re.I)
# a config key: a block and a field (model.lifecycle.manage) or a snake_case name (new_core, without_brief)
CONFIG_KEY = re.compile(r"\b(memory|model|sleep|server|notify|ripple|voice|events|supervisor|lifecycle|quality)"
                        r"\.[a-z_]+\b|\b[a-z]+_[a-z_]+\b")


def person_text(page) -> str:
    return page.evaluate(PERSON_TEXT)


def assert_plain(page) -> str:
    """The person's view has no raw id, no actor's name and no config key; its text, for more checks."""
    text = person_text(page)
    for what, pattern in (("a raw id", HEX_ID), ("an actor's name", ACTOR), ("a config key", CONFIG_KEY)):
        found = pattern.search(text)
        assert not found, f"{what} in the person's view: {found.group(0)!r}\n{text}"
    return text
