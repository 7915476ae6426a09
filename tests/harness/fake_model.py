"""The fake small model tests run against: the demo's (hippocampus/demo/fake_model.py), plus what only
tests use: a list of replies taken in order (the last one repeats) when there is no responder, a reply's
delay (seconds), status (an HTTP error status) and timings (llama-server's own token counts), the log of
every request and how many are being answered (`in_flight`), and `release()`, which ends every delay once a
test is done with the model's busy time."""
from __future__ import annotations

import threading
from typing import Callable, Optional

from hippocampus.demo import fake_model as demo
from hippocampus.demo.fake_model import NO_OPERATIONS, Reply  # noqa: F401 - the names tests import from here


class FakeModel(demo.FakeModel):
    def __init__(self, replies: Optional[list] = None, responder: Optional[Callable[[dict], Reply]] = None,
                 model_name: str = "fake-small-model"):
        super().__init__(responder, model_name)
        self.replies: list = list(replies or [])
        self.requests: list = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.released = threading.Event()

    def start(self) -> "FakeModel":
        """Served with a 0.05 s poll: the stop (server.shutdown) waits for the loop's next poll, which at the default
        0.5 s held every test's teardown 0.25 s on average (some 170 tests start one)."""
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-model", daemon=True)
        self._thread.start()
        return self

    def reply(self, body: dict) -> dict:
        if self.responder is not None:
            return super().reply(body)
        with self.lock:
            if not self.replies:
                reply = NO_OPERATIONS
            else:
                reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return {"content": reply} if isinstance(reply, str) else reply

    def respond(self, reply: dict) -> tuple:
        if reply.get("delay"):
            self.released.wait(float(reply["delay"]))
        if reply.get("status", 200) != 200:
            return int(reply["status"]), {"error": reply.get("content", "fake failure")}
        status, data = super().respond(reply)
        if reply.get("timings"):            # llama-server's own counts of the call's tokens
            data["timings"] = reply["timings"]
        return status, data

    def release(self) -> None:
        """End every delay now and from now on: what the test needed the model busy for is measured, so the
        rest of a delay would only be waited out."""
        self.released.set()

    def answer(self, handler, body: dict) -> None:
        with self.lock:
            self.requests.append(body)
            self.in_flight += 1
        try:
            super().answer(handler, body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def prompts(self) -> list:
        return [r["messages"][-1]["content"] for r in self.requests if r.get("messages")]
