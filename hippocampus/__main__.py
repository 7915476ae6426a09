"""seren-hippocampus: serve (the default), check-config, ripple-claude, check-ripple, demo, service (Windows)."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from typing import Optional

from hippocampus import SERVICE, __version__
from hippocampus import config as config_mod
from hippocampus import sdnotify
from hippocampus.service import logs
from hippocampus.service.startup import announce_exposure, enforce_exposure, use_system_trust
from hippocampus.cli import flags as flags_mod
from hippocampus.config import redact

log = logging.getLogger("hippocampus")


def serve(cfg) -> int:
    from hippocampus.service.root import BindError, Service, ServerLoopDied

    enforce_exposure(cfg)
    use_system_trust(cfg)
    service, asked = None, threading.Event()     # asked: a stop that came while the service started

    def stop(signum, frame) -> None:
        log.info("signal %s: stopping (draining in-flight requests)", signum)
        sdnotify.notify("STOPPING=1")
        if service is None:
            asked.set()
        else:
            threading.Thread(target=service.request_stop, name="stopper", daemon=True).start()

    for name in ("SIGINT", "SIGTERM", "SIGBREAK"):     # SIGBREAK: Windows' CTRL_BREAK from a service wrapper
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop)
    try:
        started = Service(cfg, own_process=True).start()
    except BindError as exc:        # before any actor started: nothing to stop
        logs.console(f"[{SERVICE}] {exc}", logging.ERROR)
        return 1
    except OSError as exc:          # a file or folder the start needs: one line, never a traceback
        log.debug("the start failed", exc_info=True)
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        logs.console(f"[{SERVICE}] could not start: {exc.strerror or exc}{where}: make that path usable by this "
                     "account (its permissions, free disk space), then start again", logging.ERROR)
        return 1
    service = started               # from here a signal stops it as it serves
    if asked.is_set():
        log.info("stopped while starting: a stop signal came before it was ready, so it never served")
        service.stop_unserved()
        return 0
    announce_exposure(cfg, service.port)
    log.info("%s %s listening on %s (memory %s, %s mode, %s; %s)", SERVICE, __version__, service.url,
             redact.url(cfg.memory.url), cfg.sleep.mode,
             "model " + redact.url(cfg.model.url) if cfg.model.configured else "mechanical",
             descriptor_limit())
    logs.console(f"[{SERVICE}] ready on {service.url}  viewer: {service.url}/viewer")
    sdnotify.notify("READY=1", f"STATUS=listening on {service.url}", f"MAINPID={os.getpid()}")
    try:
        service.serve_forever()
    except ServerLoopDied as exc:
        log.error("%s: exiting with status 1 so that the service manager restarts the service", exc)
        return 1
    return 0


def descriptor_limit() -> str:
    try:
        import resource
    except ImportError:
        return "no descriptor limit on this platform"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    name = lambda n: "unlimited" if n == resource.RLIM_INFINITY else str(n)  # noqa: E731
    return f"open files limit {name(soft)} (hard {name(hard)})"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="seren-hippocampus", description="The sleep cycle for SerenMemory.")
    p.add_argument("--version", action="version", version=f"{SERVICE} {__version__}",
                   help="print the installed version and exit")
    p.add_argument("--config", "-c", type=flags_mod.config_path,
                   help=f"the yaml config (else ${config_mod.loader.CONFIG_ENV}, else "
                        "~/seren-hippocampus/seren-hippocampus.yaml, else defaults)")
    _, level = config_mod.loader.env_override("server.log_level")
    p.add_argument("--log-level", type=flags_mod.log_level, default=flags_mod.LEVEL_ALIASES.get((level or "").lower()),
                   help=f"DEBUG, INFO, WARNING or ERROR (else ${config_mod.loader.env_names('server.log_level')[0]}, "
                        "else server.log_level)")
    p.add_argument("--log-format", choices=logs.FORMATS, default="text",
                   help="text (the default) or json: one JSON object a line on stderr, for a log shipper")
    flags_mod.add_flags(p)
    after = flags_mod.global_after()
    sub = p.add_subparsers(dest="command")
    card = flags_mod.flags_parser()
    sub.add_parser("serve", parents=[after, card], help="run the service (the default)")
    flags_mod.add_check_config_command(sub, after, card)
    flags_mod.add_ripple_commands(sub, after, card)
    flags_mod.add_replay_command(sub, after)
    svc = sub.add_parser("service", parents=[after],
                         help="Windows: install | start | stop | remove the Windows service (pywin32); "
                              "elsewhere see deploy/systemd")
    svc.add_argument("action", choices=("install", "start", "stop", "remove"))
    demo = sub.add_parser("demo", parents=[flags_mod.global_after(config=False)],
                          help="a throwaway SerenMemory and one whole sleep cycle, narrated "
                               "(needs the [dev] extra)")
    demo.add_argument("--once", action="store_true", help="run one whole cycle end to end, then exit")
    demo.add_argument("--scripted-model", action="store_true",
                      help="draft with a scripted stand-in for the small model (else mechanical mode)")
    demo.add_argument("--port", type=flags_mod.whole_arg, default=7424,
                      help="the hippocampus port (default 7424; 0 = any)")
    return p


def main(argv: Optional[list] = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(encoding="utf-8")
    args = build_parser().parse_args(argv)
    level = getattr(logging, (args.log_level or "INFO").upper(), logging.INFO)
    logs.configure(level, args.log_format)
    logging.getLogger("pykka").setLevel(logging.WARNING)
    redact.guard_logging()
    if args.command == "service":
        from hippocampus.service.winservice import cli

        return cli(args.action, args.config)
    if args.command == "demo":
        from hippocampus.demo.run import run

        return run(once=args.once, scripted_model=args.scripted_model, port=args.port)
    if args.command in ("ripple-claude", "check-ripple", "replay"):     # each subcommand imports its code (not serve)
        from hippocampus.cli import commands

        return {"ripple-claude": commands.ripple_claude, "check-ripple": commands.check_ripple,
                "replay": commands.replay_command}[args.command](args)
    checking = args.command == "check-config"
    cfg = config_mod.load(args.config, announce=not checking)
    if not (checking or args.log_level):
        logging.getLogger().setLevel(cfg.server.log_level)
    try:
        overrides = flags_mod.apply_flags(cfg, args)
    except flags_mod.FlagError as exc:
        print(f"seren-hippocampus: error: {exc}", file=sys.stderr)
        return 2
    if checking:
        from hippocampus.cli.check import check_config

        return check_config(cfg, overrides, offline=args.offline, as_json=args.json,
                            config_from=config_mod.loader.path_from(args.config))
    if overrides:
        log.info("config overridden by flags: %s", ", ".join(overrides))
    return serve(cfg)


if __name__ == "__main__":
    sys.exit(main())
