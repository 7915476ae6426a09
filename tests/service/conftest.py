"""Fixtures of the service tests that more than one file reads."""
from __future__ import annotations

import subprocess

import pytest


@pytest.fixture(scope="session")
def scripted_demo(tmp_path_factory) -> subprocess.CompletedProcess:
    """`demo --once --scripted-model`, run once for the tests that only read what it printed (test_deploy's
    redraft from the critique, test_demo_quiet's narration): the same command, the same output to read."""
    from tests.service.test_deploy import _demo

    return _demo(tmp_path_factory.mktemp("scripted-demo"), "--scripted-model")
