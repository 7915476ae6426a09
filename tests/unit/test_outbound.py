"""hippocampus.outbound's plain parts, without threads: the counted read and a deadline's cut."""
from __future__ import annotations

import socket

import pytest

from hippocampus import outbound, transport_words as tw


class Answer:
    """A response whose body comes in the given pieces; counts how many were taken."""

    def __init__(self, pieces: list) -> None:
        self._pieces, self.taken = pieces, 0
        self._content = False

    def iter_content(self, size: int):
        for piece in self._pieces:
            self.taken += 1
            yield piece


def test_a_body_within_the_cap_is_read_whole_and_left_on_the_response():
    resp = Answer([b"a" * 1000, b"b" * 24])
    assert outbound.read(resp, outbound.Deadline(5), 1024) == b"a" * 1000 + b"b" * 24
    assert resp._content == b"a" * 1000 + b"b" * 24


def test_a_body_past_the_cap_fails_at_the_piece_that_passes_it_and_is_worded():
    resp = Answer([b"a" * 600, b"a" * 600, b"a" * 600])
    with pytest.raises(outbound.AnswerTooLarge) as got:
        outbound.read(resp, outbound.Deadline(5), 1024)
    assert resp.taken == 2                               # the third piece is never asked for
    assert tw.failed(got.value, "the model", "http://127.0.0.1:8090/v1")[1] == (
        "the model at http://127.0.0.1:8090/v1 sent an answer that passed 1 KB; the call was stopped there")
    assert outbound.AnswerTooLarge(4 * outbound.MB).cap_words == "4 MB"


def test_truncate_keeps_the_first_bytes_and_reads_no_further():
    resp = Answer([b"a" * 600, b"b" * 600, b"c" * 600])
    assert outbound.read(resp, outbound.Deadline(5), 1000, truncate=True) == b"a" * 600 + b"b" * 400
    assert resp.taken == 2


def test_a_deadline_passed_between_pieces_is_a_timeout():
    resp = Answer([b"a", b"a", b"a"])
    with pytest.raises(outbound.DeadlinePassed) as got:
        outbound.read(resp, outbound.Deadline(0), 1024)
    assert resp.taken == 1
    assert tw.cause(got.value) == tw.TIMED_OUT


def test_a_cut_shuts_the_sockets_of_the_call_and_any_added_after():
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    try:
        deadline = outbound.Deadline(5)
        deadline.add(a)
        deadline._cut()
        assert deadline.cut and a.recv(1) == b""         # shut: a blocked read would end at once
        deadline.add(c)                                  # a connection opened after the cut: shut at once
        assert c.recv(1) == b""
    finally:
        for s in (a, b, c, d):
            s.close()


def test_a_released_deadline_cuts_nothing_of_a_call_that_ended():
    a, b = socket.socketpair()
    try:
        deadline = outbound.Deadline(5)
        deadline.add(a)
        deadline.release()
        deadline._cut()
        b.sendall(b"x")
        assert a.recv(1) == b"x"                         # the pooled connection is untouched
    finally:
        a.close()
        b.close()


def test_a_redirect_names_its_location_and_the_setting():
    said = tw.redirected("the webhook", "http://127.0.0.1:9/hook", 307, "http://127.0.0.1:10/x", "notify.webhook_url")
    assert said == ("the webhook at http://127.0.0.1:9/hook answered HTTP 307, a redirect to http://127.0.0.1:10/x; "
                    "redirects are never followed (if that is the right address, set notify.webhook_url to it)")
    assert tw.redirected("the webhook", "u", 302, "") == \
        "the webhook at u answered HTTP 302, a redirect with no Location; redirects are never followed"


def test_a_head_the_deadline_cuts_after_its_status_line_is_a_timeout_not_an_answer():
    """The status line came (one byte every 0.1 s: 1.7 s), the rest of the head never did: the cut at 2.5 s is a
    timeout, not a 200 with no headers (a webhook 'delivered', a model's /health 'up')."""
    from hippocampus.config import NotifyConfig
    from hippocampus.ripple.fire import Webhook
    from tests.harness.misbehaving import Misbehaving

    peer = Misbehaving("trickle_head", every=0.1)
    try:
        with pytest.raises(outbound.DeadlinePassed):
            outbound.request("GET", peer.url + "/health", seconds=2.5, cap=0)
        got = Webhook(NotifyConfig(webhook_url=peer.url + "/hook", timeout_seconds=2.5)).deliver({"type": "x",
                                                                                                 "seq": 1})
    finally:
        peer.close()
    assert got["delivered"] is False and "did not answer within 2.5 s" in got["error"], got
