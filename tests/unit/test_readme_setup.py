"""The README's setup steps agree with the sample config and the service (issue 41, item 5): the llama-server
command line serves on the sample's model.url port with the sample's -c, the `claude mcp add` line names this
service's port and /mcp, the glossary says what a brief, a draft, a chain and a ripple are, and the Config
section counts the blocks its table lists."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

from hippocampus import config as cm

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SAMPLE = cm.load(str(ROOT / "deploy" / "seren-hippocampus.yaml.sample"), announce=False)
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
         "ten": 10}


def _command(start: str) -> list:
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.S)
    lines = [ln.replace("\\\n", " ") for b in blocks for ln in re.split(r"(?<!\\)\n", b)]
    found = [ln for ln in lines if ln.strip().startswith(start)]
    assert found, f"no `{start} ...` line in the README"
    return shlex.split(found[0].split("#", 1)[0])


def _flag(argv: list, name: str) -> str:
    assert name in argv, (name, argv)
    return argv[argv.index(name) + 1]


def test_the_llama_server_line_serves_where_the_sample_config_looks_with_its_context():
    argv = _command("llama-server ")
    url = urlsplit(SAMPLE.model.url)
    assert int(_flag(argv, "--port")) == url.port == 8090
    assert _flag(argv, "-m").endswith(".gguf")
    server_args = shlex.split(SAMPLE.model.lifecycle.server_args)
    assert _flag(argv, "-c") == _flag(server_args, "-c")


def test_the_claude_code_lines_register_this_service_s_mcp_endpoint():
    plain = _command("claude mcp add")
    assert plain == ["claude", "mcp", "add", "--transport", "http", "seren-hippocampus",
                     f"http://127.0.0.1:{SAMPLE.server.port}/mcp"], plain
    with_bearer = [ln for ln in README.replace("\\\n", " ").splitlines() if "claude mcp add" in ln and "--header" in ln]
    assert with_bearer and '--header "Authorization: Bearer $' in with_bearer[0], with_bearer


def test_the_glossary_says_what_each_word_is():
    section = README.split("## Words used here", 1)[1].split("\n## ", 1)[0]
    for word in ("brief", "draft", "chain", "ripple"):
        assert f"- **{word}**:" in section, word
    assert "submit_brief" in section and "review_draft" in section         # who writes it, where it is reviewed


def test_the_config_section_counts_the_blocks_its_table_lists():
    section = README.split("\n## Config\n", 1)[1].split("\n## ", 1)[0]
    said = re.search(r"\b(\w+) blocks, plus", section).group(1).lower()
    rows = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    assert WORDS[said] == len(rows), (said, rows)
