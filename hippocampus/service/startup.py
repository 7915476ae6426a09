"""What every way of starting the service does first: the open-LAN refusal and the system trust store."""
from __future__ import annotations

import logging

from hippocampus import SERVICE
from hippocampus import config as config_mod
from hippocampus.service.logs import console

log = logging.getLogger("hippocampus")


def exposure(cfg, port: int):
    """The family's verdict on serving cfg on this port."""
    from seren_meninges.exposure import check_exposure

    return check_exposure(cfg.server.host, port, service=SERVICE, token=cfg.server.resolve_bearer(),
                          allow_open_lan=cfg.server.allow_open_lan, env_prefix=config_mod.ENV_PREFIX)


def enforce_exposure(cfg) -> None:
    """The family's refusal to start open on a LAN: printed, and exit 78, before anything is built."""
    from seren_meninges.exposure import EXIT_REFUSED

    ex = exposure(cfg, cfg.server.port)
    if ex.refused:
        console(ex.message, logging.ERROR)
        raise SystemExit(EXIT_REFUSED)


def announce_exposure(cfg, port: int) -> None:
    """Once the port is bound (no "listening on" before a bind that fails): the verdict, or the open-LAN banner."""
    console(exposure(cfg, port).message)


def use_system_trust(cfg) -> None:
    if not cfg.tls.trust_system_store:
        return
    try:
        import truststore
    except ImportError:
        log.warning("tls.trust_system_store is on but truststore is not installed: "
                    "pip install 'seren-hippocampus[corp]' (using certifi meanwhile)")
        return
    truststore.inject_into_ssl()
    log.info("TLS: using OS trust store (truststore injected)")
