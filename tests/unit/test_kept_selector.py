"""The HTTP loop's selector: registrations follow each channel's readable()/writable() answers, a channel
that leaves the map is forgotten, and a new channel on a reused descriptor number is heard."""
from __future__ import annotations

import os
import socket

import pytest

from hippocampus.http.server.loop import KeptSelector


class Channel:
    """What waitress's loop asks of a dispatcher, over one end of a socket pair."""
    accepting = False

    def __init__(self, sock: socket.socket, want_read: bool = True) -> None:
        self.sock, self.want_read, self.got = sock, want_read, []

    def readable(self) -> bool:
        return self.want_read

    def writable(self) -> bool:
        return False

    def handle_read_event(self) -> None:
        self.got.append(self.sock.recv(100))

    def handle_error(self) -> None:
        raise


@pytest.fixture
def kept():
    k = KeptSelector()
    yield k
    k.close()


@pytest.fixture
def pair():
    """socket pairs, each closed after the test (a test may close some itself)."""
    made: list = []

    def make():
        a, b = socket.socketpair()
        made.extend((a, b))
        return a, b
    yield make
    for s in made:
        s.close()


def test_a_channel_is_heard_only_while_it_says_it_is_readable(kept, pair):
    a, b = pair()
    ch = Channel(a, want_read=False)
    channels = {a.fileno(): ch}
    b.send(b"hello")
    kept.turn(0.05, channels)
    assert ch.got == []
    ch.want_read = True
    kept.turn(0.5, channels)
    assert ch.got == [b"hello"]


def test_a_new_channel_on_a_reused_descriptor_number_is_heard(kept, pair):
    a, b = pair()
    fd = a.fileno()
    kept.turn(0.01, {fd: Channel(a)})
    a.close()                                   # the kernel drops it from epoll; our record still names it
    b.close()
    c, d = pair()
    if c.fileno() != fd:                        # the new channel takes the same number
        os.dup2(c.fileno(), fd)
        c.close()
        c = socket.socket(fileno=fd)
    new = Channel(c)
    d.send(b"again")
    kept.turn(0.5, {fd: new})
    assert new.got == [b"again"]
    for s in (c, d):
        s.close()


def test_a_channel_gone_from_the_map_is_forgotten(kept, pair):
    a, b = pair()
    kept.turn(0.01, {a.fileno(): Channel(a)})
    assert a.fileno() in kept.registered
    kept.turn(0.01, {})
    assert kept.registered == {}
