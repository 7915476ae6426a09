"""The process's log formats (text, json, journald's priority prefixes) and systemd's notify protocol, as plain
calls: a datagram socket stands in for systemd's."""
from __future__ import annotations

import json
import logging
import os
import socket

import pytest

from hippocampus import sdnotify
from hippocampus.service import logs


def record(level=logging.WARNING, msg="Memory at %s is not answering", args=("http://127.0.0.1:7420",), exc=None):
    return logging.LogRecord("hippocampus.memory", level, __file__, 1, msg, args, exc)


@pytest.mark.parametrize("level,prefix", [(logging.DEBUG, "<7>"), (logging.INFO, "<6>"), (logging.WARNING, "<4>"),
                                          (logging.ERROR, "<3>"), (logging.CRITICAL, "<2>"), (25, "<6>")])
def test_journal_lines_carry_the_syslog_priority(level, prefix):
    line = logs.formatter("text", journal=True).format(record(level))
    assert line.startswith(prefix + logs.logging.getLevelName(level))
    assert "Memory at http://127.0.0.1:7420 is not answering" in line


def test_every_line_of_a_traceback_keeps_the_records_priority():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys
        rec = record(logging.ERROR, "the sleep failed", (), sys.exc_info())
    lines = logs.formatter("text", journal=True).format(rec).splitlines()
    assert len(lines) > 2 and all(line.startswith("<3>") for line in lines)


def test_json_lines_parse_with_the_traceback_inside():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys
        rec = record(logging.ERROR, "the sleep failed", (), sys.exc_info())
    line = logs.formatter("json").format(rec)
    assert "\n" not in line
    got = json.loads(line)
    assert got["level"] == "ERROR" and got["logger"] == "hippocampus.memory" and got["message"] == "the sleep failed"
    assert "ValueError: boom" in got["exception"]
    journal = logs.formatter("json", journal=True).format(record())
    assert journal.startswith("<4>{") and json.loads(journal[3:])["level"] == "WARNING"


def test_journal_is_recognised_only_when_it_names_this_stream(tmp_path, monkeypatch):
    with open(tmp_path / "err", "w") as stream:
        st = os.fstat(stream.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
        assert logs.under_journal(stream)
        monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino + 1}")
        assert not logs.under_journal(stream)
        monkeypatch.delenv("JOURNAL_STREAM")
        assert not logs.under_journal(stream)


@pytest.fixture
def systemd(tmp_path, monkeypatch):
    path = str(tmp_path / "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    yield s
    s.close()


def test_ready_reaches_the_notify_socket(systemd):
    assert sdnotify.notify("READY=1", "STATUS=listening")
    assert systemd.recv(4096) == b"READY=1\nSTATUS=listening"


def test_no_socket_no_notification(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.notify("READY=1") is False


def test_watchdog_pings_at_most_four_times_an_interval(systemd, monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "20000000")        # 20 s
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    monkeypatch.setattr(sdnotify, "_last_ping", 0.0)
    sent = [sdnotify.watchdog_ping(now=1000.0 + t) for t in (0, 1, 2, 5.5, 6)]
    assert sent == [True, False, False, True, False]
    assert systemd.recv(64) == b"WATCHDOG=1"
    monkeypatch.setenv("WATCHDOG_PID", "1")                 # meant for another process
    assert sdnotify.watchdog_ping(now=2000.0) is False
