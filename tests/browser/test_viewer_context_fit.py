"""The viewer shows the context fit as the narrator words it: on the real llama-server started with too small
a context, the headline names the three numbers and the model card has its "context" row, before any sleep."""
from __future__ import annotations

import pytest
import requests

from tests.browser.conftest import sync_api
from tests.browser.test_viewer import loaded
from tests.harness import llama_server, tiny_gguf
from tests.harness.reviewer import wait_for

expect = sync_api().expect


@pytest.fixture
def small_llama(tmp_path):
    reason = llama_server.unavailable()
    if reason:
        pytest.skip(f"real-model test skipped: {reason}")
    try:
        model = tiny_gguf.tiny_model(seed=0)
    except RuntimeError as exc:
        pytest.skip(f"real-model test skipped: {exc}")
    srv = llama_server.LlamaServer(llama_server.binary(), model, "-c", "512", log_dir=tmp_path / "llama").start()
    yield srv
    srv.stop()


def test_the_viewer_says_the_prompt_does_not_fit(small_llama, make_config, start_service, open_page):
    svc = start_service(make_config(model={"url": small_llama.url + "/v1", "max_tokens": 1024}))
    status = lambda: requests.get(svc.url + "/status", timeout=5).json()     # noqa: E731
    wait_for(lambda: "context" in status()["say"]["headline"], timeout=30, what="the fit on /status")
    say = status()["say"]
    assert "but the server's context is 512 tokens: start the server with -c " in say["headline"]
    page, console = open_page(svc.url)
    loaded(page)
    expect(page.locator("#explainText")).to_have_text(say["headline"])
    rows = say["cards"]["model"]["rows"]
    assert ["context", "see above", "bad"] in rows
    expect(page.locator("#modelList dt")).to_have_text([k for k, _, _ in rows])
    expect(page.locator("#modelList dd")).to_have_text([v for _, v, _ in rows])
    assert console.errors == []
