"""`seren-hippocampus service start` on Windows, tested on Linux by its logic: the Service Control Manager and
pywin32 are stand-ins that behave as pywin32's own WaitForServiceStatus does (it polls every 250 ms until the
state asked for, else error 1053 after waitSecs). A service that starts and stops again is said at once, with
its exit code and where its reason is, not after 30 s as 'an elevated prompt is needed'."""
from __future__ import annotations

import types

import pytest

from hippocampus.service import winservice

PENDING, STOPPED, RUNNING = 2, 1, 4
CONFIG = r"C:\seren\seren-hippocampus.yaml"


class WinError(Exception):
    """pywintypes.error: (winerror, funcname, strerror)."""
    def __init__(self, winerror, funcname, strerror):
        super().__init__(winerror, funcname, strerror)
        self.winerror, self.funcname, self.strerror = winerror, funcname, strerror


class SCM:
    """win32serviceutil as the start uses it, over a script of the service's states."""
    def __init__(self, states, refuse=None):
        self.states, self.refuse, self.slept = list(states), refuse, 0.0

    def StartService(self, name, args=None, machine=None):  # noqa: N802 - pywin32's names
        if self.refuse:
            raise WinError(*self.refuse)

    def QueryServiceStatus(self, name, machine=None):  # noqa: N802
        state = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        return state if isinstance(state, tuple) else (16, state, 0, 0, 0, 0, 0)

    def WaitForServiceStatus(self, name, status, waitSecs, machine=None):  # noqa: N802 - as pywin32 writes it
        for _ in range(waitSecs * 4):
            if self.QueryServiceStatus(name)[1] == status:
                return
            self.slept += 0.25
        raise WinError(1053, "QueryServiceStatus",
                       "The service did not respond to the start or control request in a timely fashion")

    def GetServiceCustomOption(self, name, option, default=None):  # noqa: N802
        return CONFIG


@pytest.fixture
def scm(monkeypatch):
    def make(states, refuse=None) -> SCM:
        fake = SCM(states, refuse)
        monkeypatch.setattr(winservice, "win32serviceutil", fake)
        monkeypatch.setattr(winservice, "win32service", types.SimpleNamespace(
            SERVICE_RUNNING=RUNNING, SERVICE_STOPPED=STOPPED, SERVICE_AUTO_START=2), raising=False)
        monkeypatch.setitem(__import__("sys").modules, "pywintypes", types.SimpleNamespace(error=WinError))
        monkeypatch.setattr(winservice, "_sleep", lambda s: setattr(fake, "slept", fake.slept + s), raising=False)
        return fake
    return make


def test_a_service_that_stops_while_starting_is_said_at_once_with_its_exit_code(scm, capsys):
    fake = scm([PENDING, PENDING, (16, STOPPED, 0, winservice.ERROR_SERVICE_SPECIFIC_ERROR, 1, 0, 0)])
    assert winservice._windows("start", None) != 0
    said = capsys.readouterr().err
    assert fake.slept < 2, f"waited {fake.slept} s for a service that had stopped"
    assert "stopped" in said and "exit code 1" in said and "event log" in said, said
    assert f"check-config --config {CONFIG}" in said and "elevated" not in said, said


def test_a_service_still_starting_after_the_wait_is_said_so_not_blamed_on_elevation(scm, capsys):
    fake = scm([PENDING])
    assert winservice._windows("start", None) != 0
    said = capsys.readouterr().err
    assert 29 <= fake.slept <= 31 and "still starting" in said and "elevated" not in said, said


def test_a_start_that_is_refused_for_rights_says_elevation(scm, capsys):
    scm([STOPPED], refuse=(5, "StartService", "Access is denied."))
    assert winservice._windows("start", None) != 0
    said = capsys.readouterr().err
    assert "Access is denied" in said and "elevated" in said, said


def test_a_started_service_is_said_running(scm, capsys):
    scm([PENDING, RUNNING])
    assert winservice._windows("start", None) == 0
    assert "is running" in capsys.readouterr().out


def test_removing_a_running_service_says_it_goes_once_it_stops(scm, capsys):
    fake = scm([RUNNING])
    fake.RemoveService = lambda name: None       # Windows marks a running service for deletion, and it runs on
    assert winservice._windows("remove", None) == 0
    said = capsys.readouterr().out
    assert "still runs" in said and "service stop" in said, said


def test_removing_a_stopped_service_says_removed(scm, capsys):
    fake = scm([STOPPED])
    fake.RemoveService = lambda name: None
    assert winservice._windows("remove", None) == 0
    said = capsys.readouterr().out
    assert said.strip() == f"removed the {winservice.SERVICE_NAME} service", said
