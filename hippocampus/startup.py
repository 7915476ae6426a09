"""What every way of starting the service does first: the open-LAN refusal and the system trust store."""
from __future__ import annotations

import logging
import sys

from . import SERVICE
from . import config as config_mod

log = logging.getLogger("hippocampus")


def enforce_exposure(cfg) -> None:
    """The family's refusal to start open on a LAN (exit 78), and the banner when consented."""
    from seren_meninges.exposure import enforce_exposure as enforce

    enforce(cfg.server.host, cfg.server.port, service=SERVICE, token=cfg.server.resolve_bearer(),
            allow_open_lan=cfg.server.allow_open_lan, env_prefix=config_mod.ENV_PREFIX,
            log=lambda m: print(m, file=sys.stderr, flush=True))


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
