"""The one rule for a URL shown or logged: its user:password@ and its query values hidden, the rest kept."""
from __future__ import annotations

import logging

from hippocampus.config import redact


def test_a_url_keeps_scheme_host_port_and_path_and_hides_userinfo_and_query_values():
    assert redact.url("http://user:pw@host:7420/path?key=abc&x=1") == "http://***@host:7420/path?key=***&x=***"
    assert redact.url("https://h.example/x?apikey=S3&flag") == "https://h.example/x?apikey=***&***"
    assert redact.url("http://127.0.0.1:7420") == "http://127.0.0.1:7420"
    assert redact.url("") == "" and redact.url(None) is None


def test_free_text_quoting_a_url_or_a_request_line_is_hidden_too():
    said = ("ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded with url: "
            "/api/v1/system/ripple?apikey=SECRET (Caused by x)")
    assert "SECRET" not in redact.text(said) and "port=9" in redact.text(said)
    assert redact.text("reaching http://u:PW@127.0.0.1:7420/x?key=K.") == "reaching http://***@127.0.0.1:7420/x?key=***."
    assert redact.text("a plain sentence, a=b and me@home") == "a plain sentence, a=b and me@home"
    assert redact.deep({"a": ["http://u:PW@h:1/"], "n": 3}) == {"a": ["http://***@h:1/"], "n": 3}


def test_the_log_filter_hides_them_in_every_record(caplog):
    logger = logging.getLogger("hippocampus.test-redact")
    logger.addFilter(redact.LogFilter())
    with caplog.at_level(logging.INFO, logger="hippocampus.test-redact"):
        logger.info("listening (memory %s)", "http://u:PW@127.0.0.1:7420?key=K")
    assert caplog.records[-1].getMessage() == "listening (memory http://***@127.0.0.1:7420?key=***)"
