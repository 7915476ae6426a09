"""waitress's loop on the platform's best selector (epoll on Linux), with registrations kept between turns."""
from __future__ import annotations

import contextlib
import selectors

from waitress import wasyncore

READ, WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class KeptSelector:
    """The loop on the platform's best selector (epoll), a registration kept until the channel's readable() or
    writable() answer changes (waitress rebuilds poll() every turn; select() stops at descriptor 1,024)."""

    def __init__(self) -> None:
        self.selector = selectors.DefaultSelector()
        self.registered: dict = {}          # fd -> (the channel, the events it is registered for)

    def _interest(self, fd: int, obj, events: int) -> None:
        was = self.registered.get(fd)
        if was == (obj, events):            # the same channel (dispatchers compare by identity), the same answer
            return
        if was is not None:                 # its answer changed, or a new channel reuses the number
            self._forget(fd)
        if events:
            self.selector.register(fd, events)
            self.registered[fd] = (obj, events)

    def _forget(self, fd: int) -> None:
        self.registered.pop(fd, None)
        with contextlib.suppress(KeyError, ValueError, OSError):     # closed already: the kernel let it go
            self.selector.unregister(fd)

    def turn(self, timeout: float, channels: dict) -> None:
        """One turn of the loop over waitress's map (fd -> dispatcher)."""
        for fd, obj in list(channels.items()):
            events = READ if obj.readable() else 0
            if obj.writable() and not obj.accepting:
                events |= WRITE
            self._interest(fd, obj, events)
        for fd in [fd for fd in self.registered if fd not in channels]:
            self._forget(fd)
        for key, events in self.selector.select(timeout):
            obj = channels.get(key.fd)
            if obj is None:
                continue
            if events & READ:
                wasyncore.read(obj)
            if events & WRITE and channels.get(key.fd) is obj:
                wasyncore.write(obj)

    def close(self) -> None:
        self.selector.close()


def loop(timeout: float = 30.0, use_poll: bool = False, map: dict = None) -> None:  # noqa: A002
    """wasyncore.loop as waitress calls it, on a KeptSelector."""
    kept = KeptSelector()
    try:
        while map:
            kept.turn(timeout, map)
    finally:
        kept.close()
