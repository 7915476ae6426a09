"""`seren-hippocampus replay DRAFT_ID | --last N [--candidate NAME] [--model-name NAME] [--timeout S] [--json]`.

Reads the packets from the state folder of the config (run it as the service's account: the folder is
0700), reads what landed from Memory, and sends the saved prompts to the candidate: the configured model,
or one listed in the config's replay.candidates, by name (the same rule as the service's: a URL given here
is refused, so a session with a shell cannot send the person's fragments anywhere either). Writes nothing
to Memory. Exit 0 with a result, 1 when a draft has no packet (or none are kept) or the candidate is not
allowed, 2 for a wrong call.
"""
from __future__ import annotations

import json
import sys

from hippocampus import config as config_mod
from hippocampus.memory import MemoryClient
from hippocampus.store.capture import store_for
from hippocampus.replay.run import NoPacket, NotAllowed, ReplayEnv, compare, replay
from hippocampus.replay.service import words

COLUMNS = (("ops", "valid"), ("failed", "failed_calls"), ("cut-off", "cut_off"), ("invented", "invented"),
           ("overlap", "overlap_landed"), ("seconds", "seconds"))


def _env(args) -> ReplayEnv:
    cfg = config_mod.load(getattr(args, "config", None), announce=False)
    memory = MemoryClient(cfg.memory.url, cfg.memory.resolve_bearer(), cfg.memory.timeout_seconds)
    return ReplayEnv(cfg=cfg, store=store_for(cfg), memory=memory)


def _fail(text: str, code: int) -> int:
    print(f"seren-hippocampus replay: {text}", file=sys.stderr)
    return code


def run(args, out=None) -> int:
    out = out or sys.stdout
    if (args.draft_id is None) == (args.last is None):
        return _fail("give a DRAFT_ID or --last N (one of them)", 2)
    if args.last is not None and args.last < 1:
        return _fail("--last takes a whole number of drafts, 1 or more", 2)
    if args.model_url:
        return _fail(f"--model-url is no longer taken: replay reaches only the configured model and the candidates "
                     f"listed in replay.candidates; list {args.model_url!r} there under a name and pass --candidate "
                     "NAME", 2)
    if args.timeout is not None and not args.timeout > 0:
        return _fail("--timeout is a number of seconds above 0", 2)
    env = _env(args)
    kw = {"candidate": args.candidate, "model": args.model_name, "timeout_seconds": args.timeout}
    try:
        if args.last is None:
            result = replay(env, args.draft_id, **kw)
            print(json.dumps(result, indent=2) if args.json else words(result), file=out)
            return 0
        results = compare(env, args.last, **kw)
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
    """One row per draft: original / candidate on each check; then the total line."""
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
