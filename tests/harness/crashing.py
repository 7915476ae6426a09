"""A test's own crashing children, handed to the supervisor (Service(children=...)): the product ships no fault
hook. Each child of the service, subclassed so that a test can make it crash now (a tell that raises) or die in
its next on_start, or refuse to be built (its constructor raises, as a child whose setup fails would)."""
from __future__ import annotations

import pykka

from actors.runtime import CHILDREN


class Crashes:
    def __init__(self) -> None:
        self.armed: set = set()         # names whose next on_start raises
        self.refused: set = set()       # names whose constructor raises, every time, until discarded
        self.built_refused: dict = {}   # name -> how many constructions were refused
        self.children = [self._crashing(cls) for cls in CHILDREN]

    def _crashing(self, cls: type) -> type:
        armed, refused, built_refused = self.armed, self.refused, self.built_refused

        class Crashing(cls):
            def __init__(self, *args, **kwargs) -> None:
                if cls.name in refused:
                    built_refused[cls.name] = built_refused.get(cls.name, 0) + 1
                    raise RuntimeError(f"injected constructor fault in {cls.name}")
                super().__init__(*args, **kwargs)

            def hold(self, release) -> None:
                """Busy until the test sets `release` (a threading.Event): what is told meanwhile queues."""
                release.wait(30)

            def crash(self) -> None:
                raise RuntimeError(f"injected crash in {self.name} (tell)")

            def on_start(self) -> None:
                if self.name in armed:
                    armed.discard(self.name)
                    raise RuntimeError(f"injected on_start fault in {self.name}")
                super().on_start()

        Crashing.__name__ = Crashing.__qualname__ = cls.__name__
        return Crashing

    def crash(self, runtime, name: str, where: str = "tell") -> bool:
        """Crash the child `name` now (where="on_start": and its next instance in on_start); False if it is down."""
        if where == "on_start":
            self.armed.add(name)
        try:
            runtime.registry.proxy(name).crash.defer()
            return True
        except (AttributeError, pykka.ActorDeadError):       # AttributeError: no proxy, it is down
            return False
