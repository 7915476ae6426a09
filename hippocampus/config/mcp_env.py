"""Where the MCP endpoint lives and which extra hosts and origins it takes, from the environment: read by
the HTTP guard and by the MCP mount alike, so neither front-end imports the other."""
from __future__ import annotations

import os
import re
from typing import Mapping, Optional

from hippocampus.config.schema import ENV_PREFIX

MOUNT_ENV, HOSTS_ENV, ORIGINS_ENV = (f"{ENV_PREFIX}_MCP_{n}" for n in ("MOUNT", "ALLOWED_HOSTS", "ALLOWED_ORIGINS"))
DEFAULT_MOUNT = "/mcp"


def mount_path(environ: Optional[Mapping[str, str]] = None) -> str:
    """The mount path: a leading slash added, a trailing one stripped; /mcp when unset or empty."""
    env = os.environ if environ is None else environ
    raw = (env.get(MOUNT_ENV) or "").strip().strip("/")
    return "/" + raw if raw else DEFAULT_MOUNT


def path_pattern(path: str) -> "re.Pattern[str]":
    return re.compile("^" + re.escape(path) + "/?$")


def _comma_list(name: str, environ: Optional[Mapping[str, str]]) -> list:
    env = os.environ if environ is None else environ
    return [h.strip() for h in (env.get(name) or "").split(",") if h.strip()]


def allowed_hosts(environ: Optional[Mapping[str, str]] = None) -> list:
    return _comma_list(HOSTS_ENV, environ)


def allowed_origins(environ: Optional[Mapping[str, str]] = None) -> list:
    return _comma_list(ORIGINS_ENV, environ)
