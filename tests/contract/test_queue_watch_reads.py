"""What the queue watch asks of Memory. Before the first check it reads the reviewed drafts too, so /status can
say what a chain waiting for a redraft (or one that landed) will do; once a check has read the chains (the
board's snapshot), the narrator takes them from there, so a read while a person looks asks no more than the
pending drafts and the open briefs."""
from __future__ import annotations

from types import SimpleNamespace

from actors.board import Board
from actors.watch import QueueWatch
from tests.contract.test_memory_requests import _port
from tests.harness.relay import RecordingProxy


def test_the_queue_watch_reads_the_reviewed_drafts_only_before_the_first_check(make_ctx, hand, memory):
    proxy = RecordingProxy(("127.0.0.1", _port(memory.url))).open()
    try:
        ctx = make_ctx(memory={"url": proxy.url})
        rt = SimpleNamespace(ctx=ctx, cfg=ctx.cfg, board=Board(), looks=SimpleNamespace(watched=lambda: False))
        watch = QueueWatch(None, rt)
        proxy.take()
        watch.read()
        before = RecordingProxy.by_route(proxy.take())
        rt.board.put("snapshot", {"chain_open": False})        # a check has read the chains
        view = watch.read()
        after = RecordingProxy.by_route(proxy.take())
    finally:
        proxy.close()
    assert before["GET /drafts"] == 2 and before["GET /brief"] == 1, before      # pending and reviewed
    assert after["GET /drafts"] == 1 and after["GET /brief"] == 1 and sum(after.values()) == 2, after
    assert view["error"] is None and view["redrafts"] == [] and view["landed"] == []
