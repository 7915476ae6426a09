"""The Windows service: a pywin32 shim over ServiceHost, and `seren-hippocampus service install | start |
stop | remove` (the alternative to NSSM). pywin32 is imported only on Windows, so this imports anywhere.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Optional

if not __package__:  # pragma: no cover - pythonservice.exe loads this file as a top-level module by its path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from hippocampus.service.host import ServiceHost  # noqa: E402 - absolute: it works loaded either way

SERVICE_NAME = "SerenHippocampus"
DISPLAY_NAME = "Seren Hippocampus"
DESCRIPTION = "The sleep cycle for SerenMemory"
CONFIG_OPTION = "config"
WAIT_HINT_SECONDS = 15
START_WAIT_HINT_SECONDS = 30
ERROR_SERVICE_SPECIFIC_ERROR = 1066
ERROR_ACCESS_DENIED = 5
ERROR_SERVICE_DOES_NOT_EXIST = 1060
START_WAIT_SECONDS = 30
_sleep = time.sleep
ACTIONS = ("install", "start", "stop", "remove")

win32serviceutil = None
if sys.platform == "win32":  # pragma: no cover - Windows only
    try:
        import servicemanager
        import win32service
        import win32serviceutil
    except ImportError:
        win32serviceutil = None

if win32serviceutil is not None:  # pragma: no cover - Windows only
    class SerenHippocampusService(win32serviceutil.ServiceFramework):
        _svc_name_ = SERVICE_NAME
        _svc_display_name_ = DISPLAY_NAME
        _svc_description_ = DESCRIPTION

        def __init__(self, args):
            super().__init__(args)
            self.host: Optional[ServiceHost] = None
            self.stop_asked = threading.Event()

        def SvcRun(self):  # noqa: N802 - pywin32's name
            # pywin32's own SvcRun reports RUNNING before anything starts, so a failed start looked like one
            # that worked: here RUNNING waits for the host, and a failed start is STOPPED with exit code 1.
            self.ReportServiceStatus(win32service.SERVICE_START_PENDING, waitHint=START_WAIT_HINT_SECONDS * 1000)
            self.config = win32serviceutil.GetServiceCustomOption(self._svc_name_, CONFIG_OPTION, "")
            self.host = ServiceHost(self.config, None)
            try:
                self.host.start()
            except Exception as exc:  # noqa: BLE001 - any failed start is reported, in one line
                servicemanager.LogErrorMsg(f"{SERVICE_NAME}: could not start: {exc}")
                self.ReportServiceStatus(win32service.SERVICE_STOPPED,
                                         win32ExitCode=ERROR_SERVICE_SPECIFIC_ERROR, svcExitCode=1)
                os._exit(1)
            self.ReportServiceStatus(win32service.SERVICE_RUNNING)
            self.SvcDoRun()
            self.ReportServiceStatus(win32service.SERVICE_STOP_PENDING)

        def SvcDoRun(self):  # noqa: N802 - pywin32's name
            servicemanager.LogInfoMsg(f"{SERVICE_NAME}: serving on {self.host.url} (config {self.config})")
            if self.stop_asked.is_set():           # a stop that came while it was starting
                self.host.stop(WAIT_HINT_SECONDS)
            self.host.wait()
            if self.host.failed:                   # a non-zero exit makes the SCM's recovery actions apply
                servicemanager.LogErrorMsg(f"{SERVICE_NAME}: the server loop died; see the log")
                os._exit(1)

        def SvcStop(self):  # noqa: N802 - pywin32's name
            self.ReportServiceStatus(win32service.SERVICE_STOP_PENDING, waitHint=WAIT_HINT_SECONDS * 1000)
            self.stop_asked.set()
            if self.host is not None:
                self.host.stop(WAIT_HINT_SECONDS)

        SvcShutdown = SvcStop
else:
    SerenHippocampusService = None


def available() -> bool:
    return win32serviceutil is not None


def _err(msg: str) -> int:
    print(f"seren-hippocampus service: {msg}", file=sys.stderr, flush=True)
    return 2


def cli(action: str, config: Optional[str] = None) -> int:
    if sys.platform != "win32":
        return _err("this installs a Windows service and is for Windows only. On Linux run it under systemd: "
                    "see deploy/systemd/README.md (the unit is deploy/systemd/seren-hippocampus.service); "
                    "on a Jetson see deploy/jetson/README.md")
    if not available():  # pragma: no cover - Windows only
        return _err("pywin32 is not installed: pip install 'seren-hippocampus[windows]' "
                    "(or use NSSM instead: deploy/windows/README.md)")
    return _windows(action, config)  # pragma: no cover - Windows only


def _windows(action: str, config: Optional[str]) -> int:  # pragma: no cover - Windows only
    import pywintypes

    try:
        if action == "install":
            if not config or not os.path.isabs(config):
                return _err(f"install needs --config with an ABSOLUTE path (a service starts in System32), "
                            f"not {config!r}")
            if not os.path.isfile(config):
                return _err(f"the config file {config} does not exist")
            cls = win32serviceutil.GetServiceClassString(SerenHippocampusService)
            kw = {"description": DESCRIPTION, "startType": win32service.SERVICE_AUTO_START}
            try:
                win32serviceutil.InstallService(cls, SERVICE_NAME, DISPLAY_NAME, **kw)
                print(f"installed the {SERVICE_NAME} service")
            except pywintypes.error as exc:
                if exc.winerror != 1073:           # ERROR_SERVICE_EXISTS: update it
                    raise
                win32serviceutil.ChangeServiceConfig(cls, SERVICE_NAME, displayName=DISPLAY_NAME, **kw)
                print(f"updated the existing {SERVICE_NAME} service")
            win32serviceutil.SetServiceCustomOption(SERVICE_NAME, CONFIG_OPTION, config)
            print(f"config: {config}\nstart it with: seren-hippocampus service start")
        elif action == "start":
            win32serviceutil.StartService(SERVICE_NAME)
            failed = _wait_started()
            if failed:
                return _err(failed)
            print(f"{SERVICE_NAME} is running")
        elif action == "stop":
            win32serviceutil.StopService(SERVICE_NAME)
            win32serviceutil.WaitForServiceStatus(SERVICE_NAME, win32service.SERVICE_STOPPED, WAIT_HINT_SECONDS + 5)
            print(f"{SERVICE_NAME} stopped")
        elif action == "remove":
            running = win32serviceutil.QueryServiceStatus(SERVICE_NAME)[1] != win32service.SERVICE_STOPPED
            win32serviceutil.RemoveService(SERVICE_NAME)      # a running one is only marked: it goes once stopped
            print(f"removed the {SERVICE_NAME} service" + (
                "; it still runs, and Windows deletes it once it stops: seren-hippocampus service stop" if running
                else ""))
        else:
            return _err(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    except pywintypes.error as exc:
        hint = {ERROR_ACCESS_DENIED: "; an elevated prompt is needed for install, start, stop and remove",
                ERROR_SERVICE_DOES_NOT_EXIST: "; install it first: seren-hippocampus service install --config "
                                              "<absolute path of the yaml>"}.get(exc.winerror, "")
        return _err(f"{action} failed: {exc.strerror} (error {exc.winerror}){hint}")
    return 0


def _wait_started() -> Optional[str]:  # pragma: no cover - Windows only (tested with a stand-in SCM)
    """None once the service runs; else what happened: it stopped while starting (said at once, with its exit
    code), or it is still starting after START_WAIT_SECONDS."""
    config = win32serviceutil.GetServiceCustomOption(SERVICE_NAME, CONFIG_OPTION, "") or "<its yaml>"
    for _ in range(START_WAIT_SECONDS * 4):
        status = win32serviceutil.QueryServiceStatus(SERVICE_NAME)
        if status[1] == win32service.SERVICE_RUNNING:
            return None
        if status[1] == win32service.SERVICE_STOPPED:
            code = status[4] if status[3] == ERROR_SERVICE_SPECIFIC_ERROR else status[3]
            return (f"{SERVICE_NAME} stopped while starting (exit code {code}): the Windows event log (Application, "
                    f"{SERVICE_NAME}) says why; `seren-hippocampus check-config --config {config}` checks the "
                    "config it runs")
        _sleep(0.25)
    return (f"{SERVICE_NAME} is still starting after {START_WAIT_SECONDS} s: the Windows event log (Application, "
            f"{SERVICE_NAME}) says what it waits on; `Get-Service {SERVICE_NAME}` shows when it runs")
