"""check-config: the resolved config (secrets hidden), where each value came from (yaml, environment, flag or
default), what each URL turned out to be, and every warning with its fix. As text: the config's JSON, then `#`
lines and `warning:` lines, then "no warnings" when there were none; with --json: one JSON document and nothing
else on stdout. Both are rendered from one report, so they never disagree; exit 1 when there were warnings."""
from __future__ import annotations

import json
import math
from typing import Optional

from hippocampus.config import loader, redact


def report(cfg, overrides: Optional[list] = None, offline: bool = False, config_from: str = "") -> dict:
    sources = cfg.sources or loader.Sources()
    sources.flagged(list(overrides or []))
    from hippocampus.cli import commands

    w, notes, probes = commands.probe(cfg, reach=not offline)
    if offline:
        notes = ["# offline: Memory, the model, its server and files and the ripple command were not probed"]
    warnings, context, drafting = list(cfg.warnings) + w + _refused(cfg), None, None
    if not offline and cfg.model.configured and _model_as_set(probes):     # does the largest prompt fit its context
        from hippocampus.model import fit as model_fit, size
        from hippocampus.status.narrator import context_row

        fit = model_fit.measure(cfg)
        too_long = model_fit.fit_sentence(fit)
        if too_long:
            warnings.append(f"the model's context is too small: {too_long}")
        else:
            context = context_row(fit)[1]
        drafting = size.probe(cfg.model.write, cfg.model.url)
    return {
        "config": _said(redact.deep(loader.redacted(cfg))),
        "config_file": {"path": cfg.path, "from": config_from if cfg.path else None},
        "sources": sources.every(),
        "environment": sources.from_environment(),
        "flags": list(overrides or []),
        "offline": offline,
        "probes": probes,
        "notes": [redact.text(n[2:] if n.startswith("# ") else n) for n in notes],
        "model_context": context,
        "model_drafting": drafting,
        "warnings": [redact.text(w) for w in warnings],
    }


def _said(value):
    """The config as JSON carries it: a .nan or .inf the loader has named and put right (a replay candidate's, as
    written) shown as its text, never as NaN or Infinity, which no JSON reader takes."""
    if isinstance(value, dict):
        return {k: _said(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_said(v) for v in value]
    return str(value) if isinstance(value, float) and not math.isfinite(value) else value


def _refused(cfg) -> list:
    """The open-LAN refusal the service would make at start (exit 78), as one warning; an empty bearer pointer
    already says so in the loader's warning."""
    from hippocampus.service.startup import exposure

    server = cfg.server
    if not exposure(cfg, server.port).refused or server.bearer_token_env or server.bearer_token_keyring:
        return []
    return [f"the service refuses to start on {server.host}:{server.port} (exit 78): beyond loopback it needs a "
            "bearer; set server.host: 127.0.0.1, or a bearer (server.bearer_token_env naming a variable that holds "
            "it), or server.allow_open_lan: true (or SEREN_HIPPOCAMPUS_ALLOW_OPEN_LAN=1) to run it open"]


def _model_as_set(probes: list) -> bool:
    """model.url may be the model as it is set (no fix named, not something else): worth measuring its context."""
    from hippocampus.cli import identify

    model = next((p for p in probes if p["setting"] == "model.url"), {})
    return bool(model.get("tried")) and not model.get("fix") and model.get("answered_by") not in (
        identify.MEMORY, identify.SELF, identify.OTHER)


def text_lines(rep: dict) -> list:
    out = [json.dumps(rep["config"], indent=2, sort_keys=False)]
    where = rep["config_file"]
    came = f" (from ${loader.CONFIG_ENV})" if where["from"] == loader.FROM_ENV else ""
    out.append(f"# config file: {where['path'] or '(none: defaults)'}{came}")
    if rep["flags"]:
        out.append(f"# overridden by flags: {', '.join(rep['flags'])}")
    if rep["environment"]:
        out.append("# from the environment: " + ", ".join(f"{p} (${v})" for p, v in rep["environment"].items()))
    out += [f"# {n}" for n in rep["notes"]]
    out += [f"# model {what}: {rep['model_' + what]}" for what in ("context", "drafting") if rep["model_" + what]]
    out += [f"warning: {w}" for w in rep["warnings"]]
    if not rep["warnings"]:
        out.append("no warnings")
    return out


def check_config(cfg, overrides: Optional[list] = None, offline: bool = False, as_json: bool = False,
                 config_from: str = "") -> int:
    rep = report(cfg, overrides, offline, config_from)
    print(json.dumps(rep, indent=2) if as_json else "\n".join(text_lines(rep)))
    return 1 if rep["warnings"] else 0
