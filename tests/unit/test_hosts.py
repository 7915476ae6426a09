"""The Host header as a browser sends it (RFC 9110 7.2): one name or address, then an optional :port."""
from __future__ import annotations

import pytest

from hippocampus.config.hosts import HostList, parse_host_header, split_host


@pytest.mark.parametrize("value, parsed", [
    ("127.0.0.1:7424", ("127.0.0.1", "7424")), ("LocalHost", ("localhost", None)), ("box.lan.:80", ("box.lan", "80")),
    ("[::1]:7424", ("[::1]", "7424")), ("[::1]", ("[::1]", None)), ("127.0.0.1:", ("127.0.0.1", None)),
    ("my_box-2.lan", ("my_box-2.lan", None))])
def test_the_forms_a_browser_sends_are_split(value, parsed):
    assert parse_host_header(value) == parsed


@pytest.mark.parametrize("value", [
    "127.0.0.1:7424@evil", "evil@127.0.0.1", "127.0.0.1:7424:80", "localhost:7424:evil.example",
    "127.0.0.1:7424, evil.example", "127.0.0.1, 127.0.0.1", "127.0.0.1 evil", "127.0.0.1:74x",
    "127.0.0.1:123456", "[evil.example]:7424", "[::1", "[::1]x", "[::1]:80@evil", "::1", "", "box..lan",
    "127.0.0.1:+80", "127.0.0.1:\u0663"])
def test_anything_else_is_none_and_never_allowed(value):
    assert parse_host_header(value) is None
    assert not HostList(["127.0.0.1", "localhost", "[::1]", "evil", "evil.example", "box.lan"]).allows(value)


def test_the_list_compares_the_whole_host():
    hosts = HostList(["127.0.0.1", "box.lan:7424", "other.lan:*"])
    assert hosts.allows("127.0.0.1:1") and hosts.allows("BOX.lan:7424") and hosts.allows("other.lan:9")
    assert not hosts.allows("box.lan:7425") and not hosts.allows("127.0.0.1:7424@box.lan")
    assert split_host("::1") == ("[::1]", None)           # a bind address, as config spells it, still splits
