"""The service hosted without a console (the Windows service, the tests), with no Windows in it, so Linux
drives exactly what the Windows service runs. It logs to a rotating file beside the config, whose path must
be absolute: a Windows service starts in System32.
"""
from __future__ import annotations

import logging
import logging.handlers
import os
import threading
import time
from pathlib import Path
from typing import Optional

from hippocampus import SERVICE, __version__
from hippocampus import config as config_mod
from hippocampus.config import redact
from hippocampus.service.startup import exposure, use_system_trust

log = logging.getLogger(__name__)


class OpenLanRefused(RuntimeError):
    """The family's refusal to serve beyond loopback with no bearer: its words are the whole report."""


class ServiceHost:
    def __init__(self, config_path: str, log_dir: Optional[Path] = None):
        self.config_path = "" if config_path is None else str(config_path)
        self.log_dir = Path(log_dir) if log_dir else None
        self.cfg: Optional[config_mod.Config] = None
        self.service = None
        self.log_path: Optional[Path] = None
        self._thread: Optional[threading.Thread] = None
        self._handler: Optional[logging.Handler] = None
        self._root_level: Optional[int] = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._stopping = False
        self.failed = False     # the start failed, or the server ended unasked: the process must exit non-zero

    def start(self) -> "ServiceHost":
        path = self.config_path.strip()
        if not path or not os.path.isabs(path):
            raise ValueError(
                f"the config path must be absolute, not {self.config_path!r}: a service starts in the "
                "system folder (and as a service account, whose ~ is not yours), so a relative path would "
                "read the wrong file; give the full path, e.g. C:\\Users\\you\\seren-hippocampus\\"
                "seren-hippocampus.yaml")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"the config file {path} does not exist")
        cfg = config_mod.load(path, announce=False)
        self._open_log(Path(path), cfg.server.log_level)
        log.info("%s %s starting as a service (config %s, log %s)", SERVICE, __version__, path, self.log_path)
        for w in cfg.warnings:
            log.warning("config: %s", w)
        from hippocampus.service.root import BindError, Service

        try:
            ex = exposure(cfg, cfg.server.port)
            if ex.refused:
                raise OpenLanRefused(ex.message)
            log.info("%s", ex.message)
            use_system_trust(cfg)
            self.cfg = cfg
            self.service = Service(cfg, own_process=True).start()
        except BaseException as exc:
            self.failed = True
            if isinstance(exc, (BindError, OpenLanRefused)):      # before any actor started: nothing runs; no traceback
                log.error("the service could not start: %s", exc)
            else:
                log.exception("the service could not start")
            self._close_log()
            raise
        self._thread = threading.Thread(target=self._serve, name="service-host", daemon=True)
        self._thread.start()
        log.info("%s listening on %s (memory %s, %s mode, %s)", SERVICE, self.service.url, redact.url(cfg.memory.url),
                 cfg.sleep.mode, "model " + redact.url(cfg.model.url) if cfg.model.configured else "mechanical")
        return self

    @property
    def url(self) -> str:
        return self.service.url if self.service else ""

    def _serve(self) -> None:
        try:
            self.service.serve_forever()
        except Exception:  # noqa: BLE001 - a service has no console: the log file is where this goes
            log.exception("the server stopped with an error")
        finally:
            if not self._stopping:      # it ended on its own: whoever waits on the host must hear of it
                self.failed = True
                log.error("the server stopped without being asked to: the process exits non-zero so that "
                          "the service manager starts it again")
                self._close_log()
                self._done.set()

    def _open_log(self, config_path: Path, configured_level: str = "INFO") -> None:
        folder = self.log_dir or (config_path.parent / "logs")
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / "seren-hippocampus.log"
        handler = logging.handlers.RotatingFileHandler(self.log_path, maxBytes=5 * 1024 * 1024, backupCount=5,
                                                       encoding="utf-8")
        level = getattr(logging, configured_level.upper(), logging.INFO)    # $..._LOG_LEVEL applied at load
        handler.setLevel(level)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
        handler.addFilter(redact.LogFilter())           # no URL's user:password@ or ?key= in the log
        root = logging.getLogger()
        self._root_level = root.level
        if root.level == logging.NOTSET or root.level > level:
            root.setLevel(level)
        logging.getLogger("pykka").setLevel(logging.WARNING)
        root.addHandler(handler)
        self._handler = handler

    def _close_log(self) -> None:
        handler, self._handler = self._handler, None
        if handler is None:
            return
        root = logging.getLogger()
        root.removeHandler(handler)
        handler.close()
        root.setLevel(self._root_level)

    def stop(self, wait_hint_seconds: float = 15.0) -> float:
        """The draining stop, then the actor tree, within the wait hint. Returns the seconds it took."""
        t0 = time.monotonic()
        with self._lock:
            svc = self.service
            if svc is None or self._stopping:
                return 0.0
            self._stopping = True
        hint = max(1.0, float(wait_hint_seconds))
        budget = max(0.5, hint - 1.0)          # a margin to report STOPPED inside the hint
        left = lambda: max(0.05, budget - (time.monotonic() - t0))  # noqa: E731
        log.info("stopping: draining in-flight requests (wait hint %.0f s)", hint)
        try:
            svc.request_stop(drain_seconds=budget * 0.6)
            if not svc.wait_stopped(left()):
                log.warning("the server had not stopped %.1f s into the stop", time.monotonic() - t0)
            if self._thread is not None:    # the actors' stop within it: one still busy then is left, abandoned
                self._thread.join(left())
        except Exception:  # noqa: BLE001
            log.exception("the stop failed")
        took = time.monotonic() - t0
        log.info("stopped in %.2f s", took)
        self._close_log()
        self._done.set()
        return took

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until the service has stopped (True) or the timeout passed (False)."""
        return self._done.wait(timeout)
