"""Whose share a connection counts against (issue 38, item 1): every loopback address is one client (any program
on this machine can send from any of 127.0.0.0/8 or ::1), an IPv6 address is its /64, an IPv4 address itself."""
from __future__ import annotations

import pytest

from hippocampus.http.server.clients import LOOPBACK, client_key


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "127.0.0.9", "127.255.255.254", "::1",
                                  "::ffff:127.0.0.1", "::ffff:127.0.0.5"])
def test_the_whole_loopback_range_is_one_client(host):
    assert client_key((host, 40000)) == LOOPBACK


@pytest.mark.parametrize("host, key", [
    ("192.0.2.7", "192.0.2.7"), ("::ffff:192.0.2.7", "192.0.2.7"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"), ("2001:db8:1:2:ffff::9", "2001:db8:1:2::/64"),
    ("fe80::1%eth0", "fe80::/64")])
def test_other_addresses_are_their_own_address_or_their_ipv6_64(host, key):
    assert client_key((host, 40000)) == key
