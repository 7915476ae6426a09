"""The subcommands' own code, imported only when one runs (never by `serve`): check-config's probes, check-ripple,
ripple-claude and replay."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Optional

from hippocampus import config as config_mod
from hippocampus.cli import flags as flags_mod
from hippocampus.cli import identify
from hippocampus.config.loader import out_of_range
from hippocampus.config.reach import with_scheme
from hippocampus.config.replay_endpoints import TIMEOUT_RULE, name_problem, seconds_above_zero
from hippocampus.memory import MemoryClient
from hippocampus.model.process import split_command
from hippocampus.replay.run import NoPacket, NotAllowed, ReplayEnv, compare, replay
from hippocampus.replay.service import words
from hippocampus.ripple import check as ripple_check
from hippocampus.ripple import claude as claude_setup
from hippocampus.status.watch import model_watched
from hippocampus.store import private
from hippocampus.store.capture import store_for

COLUMNS = (("ops", "valid"), ("failed", "failed_calls"), ("cut-off", "cut_off"), ("invented", "invented"),
           ("overlap", "overlap_landed"), ("seconds", "seconds"))
ERROR = "seren-hippocampus: error"      # a subcommand's refusal; replay's own say "seren-hippocampus replay"


def probe(cfg, reach: bool = True) -> tuple:
    """(warnings, notes, probes): a warning per thing that cannot be reached or is not what its setting says, with
    its fix; a note per one that is; what memory.url and model.url turned out to be (identify.Probe, as dicts). A
    managed model is down between sleeps by design, so its URL's shape, server binary and model file are looked at
    instead. Not reaching (check-config --offline): the URLs' shapes and the state folder alone, nothing reached."""
    mem = (identify.memory(cfg.memory.url, cfg.memory.resolve_bearer()) if reach
           else identify.memory_shape(cfg.memory.url))
    model = _model_probe(cfg.model, reach)
    warnings, notes = mem.warnings + model.warnings, mem.notes + model.notes
    hook = cfg.notify.webhook_url.strip()
    if hook and hook != with_scheme(hook):      # the rule memory.url and model.url are held to
        warnings.append(identify._scheme_warning("notify.webhook_url", hook, with_scheme(hook)))
    for check in (_lifecycle_probe, _ripple_probe, _state_probe) if reach else (_state_probe,):   # a local look
        w, n = check(cfg)
        warnings += w
        notes += n
    return warnings, notes, [mem.as_dict(), model.as_dict()]


def _model_probe(mcfg, reach: bool = True) -> identify.Probe:
    if not mcfg.configured:
        return identify.Probe("model.url", mcfg.url, detail="blank: mechanical mode, no model is asked")
    if reach and model_watched(mcfg):
        return identify.model(mcfg.url)
    pr = identify.model_shape(mcfg.url)      # managed: started at bedtime, its files probed in _lifecycle_probe
    pr.detail = "not reached: this service starts it at bedtime" if reach else "not reached (--offline)"
    return pr


def _lifecycle_probe(cfg) -> tuple:
    lc = cfg.model.lifecycle
    if not cfg.model.configured:
        return [], []
    warnings, notes = [], []
    if lc.server:
        found = program(lc.server)
        if found:
            notes.append(f"# found: model.lifecycle.server {found}")
        else:
            warnings.append(f"model.lifecycle.server {lc.server} {_missing(lc.server)}: the model cannot be "
                            "started at bedtime; install the server (llama-server) there, or set "
                            "model.lifecycle.server to its full path")
    if lc.model_path:
        path = os.path.expanduser(lc.model_path)
        if os.path.isfile(path):        # what the start asks of it (model/lifecycle.py built_command)
            notes.append(f"# found: model.lifecycle.model_path {path}")
        else:
            what = "is a folder, not a file" if os.path.isdir(path) else "does not exist"
            warnings.append(f"model.lifecycle.model_path {lc.model_path} {what}: the server would have "
                            "no model to load; download the model file (.gguf) there, or set "
                            "model.lifecycle.model_path to where it is")
    if lc.start and lc.manage:
        first = _first_word(lc.start)
        if first and not program(first):
            warnings.append(f"model.lifecycle.start runs {first}, which {_missing(first)}: the model cannot be "
                            "started at bedtime; install it, or give its full path in model.lifecycle.start")
    if lc.cwd and not os.path.isdir(os.path.expanduser(lc.cwd)):
        warnings.append(f"model.lifecycle.cwd {lc.cwd} is not a folder: create it, or set model.lifecycle.cwd "
                        "to the folder the server should start in")
    return warnings, notes


def _ripple_probe(cfg) -> tuple:
    if cfg.ripple.type not in ("script", "endpoint"):      # the loader's choices: lower case, stripped
        return [], []
    wanted = ("account", "command") if cfg.ripple.type == "script" else ("url",)
    lines = [ln for ln in ripple_check.checks(cfg.ripple, memory_url=cfg.memory.url) if ln.check in wanted]
    warnings = [f"ripple {ln.check}: {ln.text} (seren-hippocampus check-ripple checks the whole wake-up)"
                for ln in lines if not ln.ok]
    notes = [f"# ripple {ln.check}: {ln.text}" for ln in lines if ln.ok]
    return warnings, notes


def _state_probe(cfg) -> tuple:
    """The state folder, as the start-up would refuse it (read, never changed)."""
    why = private.refusal(Path(cfg.state_dir)) or _unmakeable(Path(cfg.state_dir))
    return ([f"the service refuses to start: {why}"] if why else []), []


def _unmakeable(folder: Path) -> str:
    """Why the start could not make a state folder that is not there yet (nothing is made here); '' if it could."""
    above = folder
    while not os.path.exists(above) and above != above.parent:
        above = above.parent
    if above == folder or (above.is_dir() and os.access(above, os.W_OK | os.X_OK)):
        return ""
    what = "is not a folder" if not above.is_dir() else "is a folder this account cannot write in"
    return (f"the state folder {folder} could not be made ({above} {what}): make it by hand, writable by this "
            "account, or set sleep.state_path to a folder it can write")


def program(name: str) -> Optional[str]:
    """A path given must be an executable file; a bare name is looked up on PATH (shutil.which does both)."""
    return shutil.which(os.path.expanduser(name))


def _missing(name: str) -> str:
    path = os.path.expanduser(name)
    if os.path.isabs(path) or os.sep in path:
        return "is not an executable file" if os.path.exists(path) else "does not exist"
    return "is not on this account's PATH"


def _first_word(line: str) -> str:
    try:
        argv = split_command(line)
    except ValueError:
        return ""
    if isinstance(argv, str):       # Windows: the whole line; its first word, quoted or not
        argv = argv.strip()
        return argv[1:].split('"', 1)[0] if argv.startswith('"') else (argv.split() or [""])[0]
    return argv[0] if argv else ""


def ripple_claude(args: argparse.Namespace) -> int:
    run_as = (args.run_as or "").strip() or claude_setup.invoking_account()
    try:
        cr = claude_setup.build(args.folder, claude_json=args.claude_json, run_as=run_as)
    except claude_setup.ClaudeSetupError as exc:
        return _fail(str(exc), who=ERROR)
    lines = (claude_setup.yaml_lines(cr, args.yaml) if args.yaml is not None else
             ["ripple:", "  type: script", *claude_setup.yaml_lines(cr, 2), f"  run_as: {json.dumps(run_as)}"])
    print("\n".join(lines))
    print(f"# {len(cr.servers)} MCP server(s) for {cr.cwd}: {cr.registered.scopes()} "
          f"(from {cr.registered.settings})", file=sys.stderr)
    return 0


def check_ripple(args: argparse.Namespace) -> int:
    least, most = flags_mod.setting_range("ripple.timeout_seconds")       # the yaml's rule (argparse: finite)
    if args.timeout is not None and (problem := out_of_range(args.timeout, least, most)):
        return _fail(f"--timeout {problem}, not {args.timeout:g}", who=ERROR)
    cfg = config_mod.load(args.config, announce=False)
    try:
        overrides = flags_mod.apply_flags(cfg, args)
    except flags_mod.FlagError as exc:
        return _fail(str(exc), who=ERROR)
    for w in cfg.warnings:
        print(f"warning: {w}", file=sys.stderr)
    name, _ = ripple_check.Probe().whoami() if cfg.ripple.type == "script" else ("", False)
    print(f"# ripple: {ripple_check.route(cfg.ripple)} (config {cfg.path or '(none: defaults)'}"
          + (f"; overridden by flags: {', '.join(overrides)}" if overrides else "")
          + (f"; checked as {name}" if name else "") + ")")
    lines = ripple_check.checks(cfg.ripple, memory_url=cfg.memory.url)
    for ln in lines:
        print(ln.render(), flush=True)
    if args.fire and cfg.ripple.type:
        print("# firing one harmless wake-up through the ripple ...", flush=True)
        ln = ripple_check.fire(cfg.ripple, log_dir=cfg.state_dir, timeout=args.timeout)
        print(ln.render())
        lines.append(ln)
    bad = [ln for ln in lines if not ln.ok]
    print(f"# {'all ' + str(len(lines)) + ' ok' if not bad else f'{len(bad)} of {len(lines)} not ok'}")
    return 1 if bad else 0


def _fail(text: str, code: int = 2, who: str = "seren-hippocampus replay") -> int:
    print(f"{who}: {text}", file=sys.stderr)
    return code


def replay_command(args, out=None) -> int:
    """`replay DRAFT_ID | --last N`, by the service's rule (a URL given here is refused, so a shell cannot send the
    person's fragments anywhere either): exit 1 when a draft has no packet or the candidate is not allowed."""
    out = out or sys.stdout
    draft_id = (args.draft_id or "").strip() or None        # as POST /replay and replay_draft read it
    if (draft_id is None) == (args.last is None):
        return _fail("give a DRAFT_ID or --last N (one of them)", 2)
    if problem := name_problem("--candidate", args.candidate) or name_problem("--model-name", args.model_name):
        return _fail(problem, 2)
    if args.last is not None and args.last < 1:
        return _fail("--last takes a whole number of drafts, 1 or more", 2)
    if args.model_url:
        return _fail(f"--model-url is no longer taken: replay reaches only the configured model and the candidates "
                     f"listed in replay.candidates; list {args.model_url!r} there under a name and pass --candidate "
                     "NAME", 2)
    if args.timeout is not None and not seconds_above_zero(args.timeout):     # POST /replay's rule and words
        return _fail(f"--timeout is {TIMEOUT_RULE}, not {args.timeout:g}", 2)
    cfg = config_mod.load(getattr(args, "config", None), announce=False)
    memory = MemoryClient(cfg.memory.url, cfg.memory.resolve_bearer(), cfg.memory.timeout_seconds)
    env = ReplayEnv(cfg=cfg, store=store_for(cfg), memory=memory)
    kw = {"candidate": args.candidate, "model": args.model_name, "timeout_seconds": args.timeout}
    try:
        if args.last is None:
            result = replay(env, draft_id, **kw)
            print(json.dumps(result, indent=2) if args.json else words(result), file=out)
            return 0
        results = compare(env, min(args.last, sys.maxsize), **kw)      # past what islice counts: every one
    except (NoPacket, NotAllowed) as exc:
        return _fail(str(exc), 1)
    if not results["drafts"]:
        return _fail(f"no replay packets in {env.store.folder}", 1)
    print(json.dumps(results, indent=2) if args.json else table(results), file=out)
    return 0


_FORMATS = {"overlap_landed": "{:.2f}", "seconds": "{:.1f}"}     # every other column as it is


def _cell(k: dict, key: str) -> str:
    v = k.get(key)
    return "-" if v is None else _FORMATS.get(key, "{}").format(v)


def table(results: dict) -> str:
    head = ["draft", "attempt"] + [name for name, _ in COLUMNS]
    rows = []
    for r in results["drafts"]:
        o, c = r["original"]["checks"], r["candidate"]["checks"]
        rows.append([r["draft_id"][:12], str(r.get("attempt") or "")]
                    + [f"{_cell(o, key)} / {_cell(c, key)}" for _, key in COLUMNS])
    t = results["total"]
    rows.append([f"total ({t['original']['drafts']})", ""]
                + [f"{_cell(t['original'], key)} / {_cell(t['candidate'], key)}" for _, key in COLUMNS])
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    served = next((r["candidate"].get("served") for r in results["drafts"] if r["candidate"].get("served")), None)
    url = results["drafts"][0]["candidate"]["url"]
    note = results["drafts"][0].get("timeout_note")
    return "\n".join([f"original / candidate ({served or 'no answer'} at {url})", line(head)]
                     + [line(r) for r in rows] + ([f"note: {note}"] if note else []))
