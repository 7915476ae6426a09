"""Memory's address as resolved, not as spelled (config/reach.py; issue 38, item 10): pure, no server needed."""
from __future__ import annotations

import socket

import pytest

from hippocampus.config.reach import Memory, address

THIS_HOST = ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0", "0.0.0.0", "127.0.0.2",
             "127.255.255.254", "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "localhost"]


@pytest.mark.parametrize("memory_host", ["127.0.0.1", "localhost", "0.0.0.0", "[::1]", "127.0.0.3"])
def test_every_spelling_of_this_host_at_memorys_port_is_memory(memory_host):
    memory = Memory(f"http://{memory_host}:7420")
    for host in THIS_HOST:
        assert memory.reached_by(f"http://{host}:7420/short?x="), host
        assert not memory.reached_by(f"http://{host}:7421/v1"), host        # another port is another service
    assert memory.reached_by(f"http://{socket.gethostname()}:7420/v1") or not _resolves(socket.gethostname())


def test_the_port_is_the_schemes_when_none_is_given_and_an_elsewhere_address_is_not_memory():
    assert Memory("http://127.0.0.1").reached_by("http://127.1:80/v1")
    assert not Memory("http://127.0.0.1").reached_by("https://127.1/v1")           # 443 against 80
    assert not Memory("http://127.0.0.1:7420").reached_by("http://192.0.2.10:7420/v1")   # not this host
    assert Memory("http://192.0.2.10:7420").reached_by("http://3221225994:7420/v1")      # the same, spelled so
    assert not Memory("http://192.0.2.10:7420").reached_by("http://127.0.0.1:7420/v1")
    assert not Memory("http://127.0.0.1:7420").reached_by("http://name.invalid:7420/v1")  # resolves to nothing
    assert not Memory("http://127.0.0.1:7420").reached_by("not a url")


def test_a_peer_address_is_read_in_one_family():
    memory = Memory("http://127.0.0.1:7420")
    assert memory.is_memory("::ffff:127.0.0.1", 7420) and memory.is_memory("127.9.9.9", 7420)
    assert not memory.is_memory("127.0.0.1", 7421)
    assert str(address("::ffff:127.0.0.1")) == "127.0.0.1" and address("box.lan") is None


def _resolves(name: str) -> bool:
    try:
        return bool(socket.getaddrinfo(name, None))
    except OSError:
        return False
