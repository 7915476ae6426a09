"""check-config names what a memory.url or model.url lacks, so the fix is plain: no host ("http://" was read as a
URL with no scheme and the fix offered was http://http:), or a port no connection can use."""
from __future__ import annotations

import pytest


def _warnings(tmp_path, capsys, block: str, url: str) -> list:
    from hippocampus.__main__ import main

    path = tmp_path / "h.yaml"
    path.write_text(f'{block}:\n  url: "{url}"\nsleep:\n  state_path: "{tmp_path / "s.json"}"\n', encoding="utf-8")
    assert main(["check-config", "--offline", "--config", str(path)]) == 1
    return [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(f"warning: {block}.url")]


@pytest.mark.parametrize("url", ["http://", "https://", "http:///", "http://:7420"])
def test_a_memory_url_with_no_host_says_so(tmp_path, capsys, url):
    assert _warnings(tmp_path, capsys, "memory", url) == [
        "warning: memory.url has no host: write it like http://127.0.0.1:7420"]


@pytest.mark.parametrize("url, port", [("http://127.0.0.1:99999", "99999"), ("http://127.0.0.1:0", "0"),
                                       ("http://h:abc", "abc")])
def test_a_memory_url_whose_port_cannot_be_used_names_the_port(tmp_path, capsys, url, port):
    assert _warnings(tmp_path, capsys, "memory", url) == [
        f"warning: memory.url {url} is not a URL this service can call: its port {port} is not 1 to 65535; write it "
        "like http://127.0.0.1:7420"]


@pytest.mark.parametrize("url, says", [
    ("http://", "model.url has no host: write it like"),
    ("http://127.0.0.1:99999/v1", "model.url http://127.0.0.1:99999/v1 is not a URL this service can call: its port "
                                  "99999 is not 1 to 65535; write it like")])
def test_a_model_url_says_the_same(tmp_path, capsys, url, says):
    assert _warnings(tmp_path, capsys, "model", url) == [
        f"warning: {says} http://127.0.0.1:8080/v1, or leave model.url blank for mechanical mode"]


@pytest.mark.parametrize("url", ["http://ex ample.com", "http://mé moire:7420"])
def test_a_memory_url_with_a_space_in_its_host_says_so(tmp_path, capsys, url):
    """Found: it was tried, and said "does not answer (could not be reached ...)": start SerenMemory there."""
    assert _warnings(tmp_path, capsys, "memory", url) == [
        f"warning: memory.url {url} has a space in its host: write it like http://127.0.0.1:7420"]
