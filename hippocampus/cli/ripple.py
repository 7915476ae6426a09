"""The two ripple commands: `ripple-claude DIR [--yaml N]` and `check-ripple [--config FILE] [--fire]`."""
from __future__ import annotations

import argparse
import json
import sys

from hippocampus.ripple import claude as claude_setup
from hippocampus.ripple import check as ripple_check
from hippocampus.ripple import trial, wakeup
from hippocampus import config as config_mod
from hippocampus.cli import flags as flags_mod


def _error(text: str) -> int:
    print(f"seren-hippocampus: error: {text}", file=sys.stderr)
    return 2


def ripple_claude(args: argparse.Namespace) -> int:
    run_as = (args.run_as or "").strip() or claude_setup.invoking_account()
    try:
        cr = claude_setup.build(args.folder, claude_json=args.claude_json, run_as=run_as)
    except claude_setup.ClaudeSetupError as exc:
        return _error(str(exc))
    if args.yaml is not None:
        print("\n".join(claude_setup.yaml_lines(cr, args.yaml)))
    else:
        lines = ["ripple:", "  type: script", *claude_setup.yaml_lines(cr, 2), f"  run_as: {json.dumps(run_as)}"]
        print("\n".join(lines))
    print(f"# {len(cr.servers)} MCP server(s) for {cr.cwd}: {cr.registered.scopes()} "
          f"(from {cr.registered.settings})", file=sys.stderr)
    return 0


def check_ripple(args: argparse.Namespace) -> int:
    cfg = config_mod.load(args.config, announce=False)
    try:
        overrides = flags_mod.apply_flags(cfg, args)
    except flags_mod.FlagError as exc:
        return _error(str(exc))
    for w in cfg.warnings:
        print(f"warning: {w}", file=sys.stderr)
    name, _ = ripple_check.Probe().whoami() if cfg.ripple.type == "script" else ("", False)
    print(f"# ripple: {wakeup.route(cfg.ripple)} (config {cfg.path or '(none: defaults)'}"
          + (f"; overridden by flags: {', '.join(overrides)}" if overrides else "")
          + (f"; checked as {name}" if name else "") + ")")
    lines = ripple_check.checks(cfg.ripple, memory_url=cfg.memory.url)
    for ln in lines:
        print(ln.render(), flush=True)
    if args.fire and cfg.ripple.type:
        print("# firing one harmless wake-up through the ripple ...", flush=True)
        ln = trial.fire(cfg.ripple, log_dir=cfg.state_dir, timeout=args.timeout)
        print(ln.render())
        lines.append(ln)
    bad = [ln for ln in lines if not ln.ok]
    print(f"# {'all ' + str(len(lines)) + ' ok' if not bad else f'{len(bad)} of {len(lines)} not ok'}")
    return 1 if bad else 0
