"""The command line's arguments, defined apart from the subcommands' code, so building the parser imports none of
it; and the installer card's flags, taken by `serve` (and the bare command), check-config and check-ripple, so a
setting can be tried without editing the yaml (a combination the card refuses raises FlagError: exit 2)."""
from __future__ import annotations

import argparse
import contextlib
import functools
import operator
import os
import sys
from importlib.util import find_spec
from typing import Callable, Optional

from hippocampus import cmdline
from hippocampus.config import Config
from hippocampus.config.loader import NotAFile, check_value, out_of_range, read_head, unsplit, whole_number
from hippocampus.config.replay_endpoints import TIMEOUT_CAP
from hippocampus.config.schema import _LEVEL_ALIASES as LEVEL_ALIASES, _block_type
from hippocampus.words import yes_no

# The Seren installers' rule for --tend-every (family conventions): a person's flag; the yaml's
# sleep.tend_interval_seconds takes down to the schema's least, which the tests use.
TEND_EVERY_LEAST = 60.0
MCP_HINT = "pip install 'seren-hippocampus[mcp]'"
REPLAY_DESCRIPTION = ("Send past drafts' saved prompts (the replay packets beside the state file) to a candidate "
                      "small model, exactly as they were sent then, read its answers the way a sleep reads them, and "
                      "compare both sides: operations that parse, failed calls, cut-off answers, invented numbers or "
                      "dates, word overlap with what landed in Memory, seconds. Nothing is written to Memory.")


class FlagError(ValueError):
    """A flag (or a combination of flags) the card would refuse."""


def _typed(convert: Callable, what: str) -> Callable:
    def parse(value: str):
        with contextlib.suppress(ValueError):
            if (out := convert(value)) is not None:
                return out
        raise argparse.ArgumentTypeError(f"expected {what}, not {value!r}")
    return parse


def _seconds(value: str) -> float:
    """A number of seconds by the yaml's rule (no NaN; check_value: no inf, nothing past LONGEST), in its words."""
    why = ""
    with contextlib.suppress(ValueError):
        if (number := float(value)) == number:      # NaN is no number at all, as the yaml says
            try:
                return check_value(number, {})[0]
            except ValueError as exc:
                why = f": it {exc}"
    raise argparse.ArgumentTypeError(f"expected a number of seconds, not {value!r}{why}")


_on_off = _typed(yes_no, "on or off")
_any_seconds = _typed(float, "a number of seconds")      # replay's: POST /replay's rule then says why it is refused
whole_arg = _typed(whole_number, "a whole number")     # as the yaml and the environment read one (no "2_000")
_indent = _typed(lambda v: whole_number(v) if whole_number(v) in range(65) else None, "a number of spaces, 0 to 64")
log_level = _typed(lambda v: LEVEL_ALIASES.get(v.strip().lower()), "DEBUG, INFO, WARNING or ERROR")


def config_path(text: str) -> str:
    """--config's path; a blank one (an unset shell variable) is refused, not read as no flag at all."""
    if not text.strip():
        raise argparse.ArgumentTypeError("--config is blank: give the path of the yaml file")
    return text


def _rules(path: str) -> dict:
    """The schema's rules for the setting at dotted `path`, which the flag, the yaml and the environment share."""
    *blocks, name = path.split(".")
    return dict(functools.reduce(_block_type, blocks, Config).__dataclass_fields__[name].metadata)


def setting_range(path: str) -> tuple:
    """(least, most) the setting at dotted `path` takes (None: no bound)."""
    rules = _rules(path)
    return rules.get("min"), rules.get("max")


_ripple_type = _typed(lambda v: check_value(v, _rules("ripple.type"))[0], "script, endpoint or off")   # as the yaml


SWITCH = "switch"       # a flag that takes no value: given, it sets True
_FLAGS = (   # (flag, its type: a converter or SWITCH, its metavar, its help)
    ("--tend-cycle", _on_off, "on|off", "tend reviewed drafts between sleeps (sleep.tend_cycle)"),
    ("--tend-every", _seconds, "SECONDS", f"seconds between tends, at least {TEND_EVERY_LEAST:g} "
                                          "(sleep.tend_interval_seconds)"),
    ("--budget-calls", whole_arg, "N", "model calls one night may make, 0 for no limit (sleep.budget.calls)"),
    ("--budget-answer-tokens", whole_arg, "N", "answer tokens one night may spend, 0 for no limit "
                                            "(sleep.budget.answer_tokens)"),
    ("--budget-seconds", _seconds, "SECONDS", "seconds one night may run, 0 for no limit (sleep.budget.wall_seconds)"),
    ("--budget-cut-in-a-row", whole_arg, "N", "the breaker: the night stops after this many answers in a row cut at "
                                           "model.max_tokens, 0 for never (sleep.budget.cut_in_a_row)"),
    ("--model-server", None, "PATH", "llama-server this service starts and stops (model.lifecycle.server)"),
    ("--model-path", None, "PATH", "the .gguf the started server loads (model.lifecycle.model_path)"),
    ("--model-args", None, "ARGS",
     'extra llama-server arguments, e.g. --model-args="-ngl 99 -c 4096" (model.lifecycle.server_args)'),
    ("--model-max-tokens", whole_arg, "N",
     "the answer budget of one drafting call, %d to %d (model.max_tokens)" % setting_range("model.max_tokens")),
    ("--model-parallel", whole_arg, "N", "piles drafted at once, %d to %d (model.parallel): start llama-server with as "
                                      "many slots (-np N); for a box that can afford it, 1 on a Jetson"
                                      % setting_range("model.parallel")),
    ("--model-handover", SWITCH, None,
     "stop the model this service started before the main model is poked (model.lifecycle.handover)"),
    ("--mcp", SWITCH, None, "an MCP client calls this service: check that the [mcp] extra is installed (the "
                            "endpoint is /mcp), say so, and load /mcp right after the start (server.mcp_preload)"),
    ("--ripple", _ripple_type, "script|endpoint|off",
     "how the main model is woken: a script here, an endpoint, or not at all (ripple.type)"),
    ("--ripple-command", None, "CMD",
     'the script ripple\'s command line, split like a shell, e.g. "claude -p {message}" (ripple.command)'),
    ("--ripple-url", None, "URL", "the endpoint ripple's Observatory or Lodestar ripple route (ripple.url)"),
    ("--ripple-token-env", None, "NAME", "the environment variable holding the endpoint ripple's bearer "
                                         "(ripple.bearer_token_env)"),
    ("--ripple-token-file", None, "PATH", "a file holding the endpoint ripple's bearer, its first line "
                                          "(ripple.bearer_token; keep the file 0600)"),
    ("--ripple-token", None, "TOKEN", "the endpoint ripple's bearer itself (ripple.bearer_token): it shows in "
                                      "the process list, so prefer --ripple-token-env or --ripple-token-file"),
    ("--ripple-run-as", None, "USER", "the user the script ripple runs as (ripple.run_as)"),
    ("--ripple-stdin", SWITCH, None, "send the ripple message on stdin instead of in {message} (ripple.stdin)"),
    ("--ripple-claude", None, "DIR", "wake Claude Code on this box in project folder DIR: reads ~/.claude.json and "
                                     "DIR/.mcp.json for the MCP servers registered there and writes a script ripple "
                                     "with their tools pre-approved and DIR as the working directory (ripple.type, "
                                     "ripple.command, ripple.cwd; ripple.run_as defaults to you)"),
    ("--claude-json", None, "PATH",
     "the Claude Code settings --ripple-claude reads (else $SEREN_CLAUDE_JSON, else run_as's ~/.claude.json)"),
    ("--voice-card", SWITCH, None, "let the main model keep a voice card here (voice.enabled)"),
)


def add_flags(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The card's flags; their defaults are SUPPRESS: absent means 'leave it'."""
    g = parser.add_argument_group(
        "config overrides (the installer card's flags; each wins over the yaml, absent ones change nothing)")
    for flag, kind, metavar, text in _FLAGS:
        how = {"action": "store_const", "const": True} if kind == SWITCH else {"type": kind, "metavar": metavar}
        g.add_argument(flag, default=argparse.SUPPRESS, help=text, **how)
    return parser


def flags_parser() -> argparse.ArgumentParser:
    return add_flags(argparse.ArgumentParser(add_help=False))


def add_check_config_command(sub, after: argparse.ArgumentParser, card: argparse.ArgumentParser) -> None:
    p = sub.add_parser("check-config", parents=[after, card],
                       help="print the resolved config (secrets hidden) and every warning, after trying what it "
                            "names (Memory, the model, the model server and its files, the ripple command); "
                            "exit 1 when there were warnings")
    p.add_argument("--offline", action="store_true",
                   help="check the config alone: reach nothing (no Memory, model, file or PATH probes)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (the config, where each value came from, what each URL turned out "
                        "to be, the warnings) and nothing else on stdout")


def global_after(*, config: bool = True) -> argparse.ArgumentParser:
    """The global options again, for after the subcommand; their defaults are SUPPRESS, so an option given
    before the subcommand stays."""
    from hippocampus import SERVICE, __version__

    after = argparse.ArgumentParser(add_help=False)
    if config:
        after.add_argument("--config", "-c", type=config_path, default=argparse.SUPPRESS, help="the yaml config")
    after.add_argument("--log-level", type=log_level, default=argparse.SUPPRESS, metavar="LEVEL",
                       help="DEBUG, INFO, WARNING or ERROR")
    after.add_argument("--version", action="version", version=f"{SERVICE} {__version__}",
                       help="print the installed version and exit")
    return after


def add_ripple_commands(sub, after: argparse.ArgumentParser, card: argparse.ArgumentParser) -> None:
    rc = sub.add_parser("ripple-claude", parents=[global_after(config=False)],
                        help="print the ripple block that wakes Claude Code in DIR (with --yaml N: the command and "
                             "cwd lines, indented N spaces, as the installer card writes them)")
    rc.add_argument("folder", metavar="DIR", help="the project folder you run `claude` in")
    rc.add_argument("--yaml", type=_indent, metavar="N", default=None,
                    help="print only the two lines `command: [...]` and `cwd: \"...\"`, indented N spaces (0 to 64)")
    rc.add_argument("--claude-json", metavar="PATH", default=None,
                    help="the Claude Code settings to read (else $SEREN_CLAUDE_JSON, else ~/.claude.json)")
    rc.add_argument("--run-as", metavar="USER", default=None,
                    help="the account the ripple runs as, whose ~/.claude.json is read (default: you)")
    chk = sub.add_parser("check-ripple", parents=[after, card],
                         help="check that a wake-up of the main model would work, one line per precondition (ok, "
                              "or what is wrong and how to fix it); exit 1 when any is not ok")
    chk.add_argument("--fire", action="store_true", help="also send one harmless wake-up through the real route and "
                                                         "report its exit code, time and first lines of output")
    chk.add_argument("--timeout", type=_seconds, metavar="SECONDS", default=None,
                     help="how long --fire waits for the command (at least %g; default ripple.timeout_seconds)"
                          % setting_range("ripple.timeout_seconds")[0])


def add_replay_command(sub, after: argparse.ArgumentParser) -> None:
    p = sub.add_parser("replay", parents=[after], help="replay past drafts on a candidate small model and compare",
                       description=REPLAY_DESCRIPTION)
    p.add_argument("draft_id", nargs="?",
                   help="the draft to replay (its id, as in Memory's list_drafts); or use --last N")
    p.add_argument("--last", type=whole_arg, metavar="N",
                   help="replay the newest N drafts that have a packet and print one table with a total line")
    p.add_argument("--candidate", metavar="NAME", help="the candidate to replay on: a name listed in the config's "
                                                        "replay.candidates (default: the configured model, model.url)")
    p.add_argument("--model-url", metavar="URL",
                   help="no longer taken: list the candidate's URL in replay.candidates and name it with --candidate")
    p.add_argument("--model-name", metavar="NAME",
                   help="the model name sent to the candidate (default: the candidate's model, or model.name)")
    p.add_argument("--timeout", type=_any_seconds, metavar="SECONDS",
                   help="seconds each candidate call may take (default: the candidate's timeout_seconds or "
                        f"model.timeout_seconds; at most {TIMEOUT_CAP:g}); a call that takes longer is a failed "
                        "call in the result")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON instead of the summary")


def apply_flags(cfg: Config, args: argparse.Namespace, say: Optional[Callable[[str], None]] = None) -> list:
    """Lay the given flags over cfg (in place); return the dotted settings they changed."""
    say = say or functools.partial(print, file=sys.stderr, flush=True)
    given = {k: v for k, v in vars(args).items() if v is not None}
    changed: list = []

    def put(path: str, value: object) -> None:
        block, _, name = path.rpartition(".")
        setattr(operator.attrgetter(block)(cfg), name, value)
        changed.append(path)

    _apply_sleep(given, put)
    _apply_model(cfg.model, given, put)
    _apply_ripple(cfg.ripple, given, put, say)
    if given.get("voice_card"):
        put("voice.enabled", True)
    if given.get("mcp"):
        if all(find_spec(name) is not None for name in ("mcp", "a2wsgi")):     # found, not imported
            say(f"MCP: the [mcp] extra is installed; the endpoint is {cfg.server.mcp_mount}")
        else:
            say(f"MCP: the [mcp] extra is NOT installed, so {cfg.server.mcp_mount} only says how to get it: {MCP_HINT}")
        put("server.mcp_preload", True)
    return changed


def _apply_sleep(given: dict, put) -> None:
    if "tend_cycle" in given:
        put("sleep.tend_cycle", bool(given["tend_cycle"]))
    if "tend_every" in given:       # argparse has made it a float (_seconds), as it makes the others ints (whole_arg)
        if given.get("tend_cycle") is False:
            raise FlagError("--tend-every makes no sense with --tend-cycle off: give one or the other")
        if given["tend_every"] < TEND_EVERY_LEAST:
            raise FlagError(f"--tend-every must be at least {TEND_EVERY_LEAST:g} seconds, not {given['tend_every']:g}"
                            " (a shorter tend, for a test, is sleep.tend_interval_seconds in the yaml)")
        put("sleep.tend_interval_seconds", given["tend_every"])
    for flag, key in (("budget_calls", "calls"), ("budget_answer_tokens", "answer_tokens"),
                      ("budget_seconds", "wall_seconds"), ("budget_cut_in_a_row", "cut_in_a_row")):
        if flag in given:
            if problem := out_of_range(given[flag], *setting_range(f"sleep.budget.{key}")):   # the yaml's words
                raise FlagError(f"--{flag.replace('_', '-')} {problem}, not {given[flag]:g}")
            put(f"sleep.budget.{key}", given[flag])


def _apply_model(model, given: dict, put) -> None:
    lc = model.lifecycle
    _copy(given, put, (("model_server", "model.lifecycle.server"), ("model_path", "model.lifecycle.model_path"),
                       ("model_args", "model.lifecycle.server_args")))
    if ("model_server" in given or "model_path" in given) and not lc.start and bool(lc.server) != bool(lc.model_path):
        have, need, key = (("--model-server", "--model-path", "model_path") if lc.server
                           else ("--model-path", "--model-server", "server"))
        raise FlagError(f"{have} needs {need} too (the server and the .gguf it loads): give both, or set "
                        f"model.lifecycle.{key} in the yaml")
    if lc.built and not lc.manage:
        put("model.lifecycle.manage", True)   # server + path turn management on, as in the yaml
    for name in ("max_tokens", "parallel"):       # the yaml's range for the setting, in the loader's words
        if (value := given.get("model_" + name)) is not None:
            if problem := out_of_range(value, *setting_range("model." + name)):
                raise FlagError(f"--model-{name.replace('_', '-')} {problem}, not {value}")
            put("model." + name, value)
    if given.get("model_handover"):
        if not lc.managed:
            raise FlagError("--model-handover needs a model this service starts: give --model-server and "
                            "--model-path (or set model.lifecycle in the yaml)")
        put("model.lifecycle.handover", True)


def _apply_ripple(ripple, given: dict, put, say: Callable[[str], None]) -> None:
    if "ripple" in given:
        put("ripple.type", given["ripple"])        # "" for off, as the yaml reads it
    if "ripple_command" in given:
        try:
            argv = cmdline.split(str(given["ripple_command"]), windows=os.name == "nt")
        except ValueError as exc:
            raise FlagError(f"--ripple-command {unsplit(exc)}") from None
        if not argv:
            raise FlagError("--ripple-command is empty: give the command that wakes the main model, like "
                            "--ripple-command 'claude -p {message}' (or --ripple-claude DIR to write it)")
        put("ripple.command", argv)
    _copy(given, put, (("ripple_url", "ripple.url"), ("ripple_run_as", "ripple.run_as")))
    _ripple_token(given, put, say)
    if given.get("ripple_stdin"):
        put("ripple.stdin", True)
    if "ripple_claude" in given:
        _ripple_claude(ripple, given, put, say)
    elif "claude_json" in given:
        raise FlagError("--claude-json only matters with --ripple-claude DIR: give both, or neither")
    if ripple.type == "endpoint" and not ripple.url and "ripple" in given:
        raise FlagError("--ripple endpoint needs a url: give --ripple-url (an Observatory or Lodestar ripple route)")


TOKEN_FLAGS = ("ripple_token", "ripple_token_env", "ripple_token_file")
TOKEN_FILE_BYTES = 16 * 1024      # of --ripple-token-file only this much is read: a bearer is one short line
SHOWN_IN_PS = ("warning: --ripple-token puts the ripple's bearer on the command line, where any account on this "
               "box can read it in the process list (ps, /proc); use --ripple-token-env NAME (the variable holding "
               "it) or --ripple-token-file PATH instead")


def _ripple_token(given: dict, put, say: Callable[[str], None]) -> None:
    """The endpoint ripple's bearer from a flag: the variable that holds it, a file, or (warned) the token itself.
    The flag wins over the yaml's pointers, so the ones it does not use are cleared."""
    named = [f for f in TOKEN_FLAGS if f in given]
    if len(named) > 1:
        raise FlagError("give the ripple's bearer one way: " + " or ".join("--" + f.replace("_", "-") for f in named)
                        + ", not both")
    if not named:
        return
    token, env = "", ""
    if "ripple_token_env" in given:
        env = str(given["ripple_token_env"]).strip().lstrip("$")
        if not env:
            raise FlagError("--ripple-token-env is empty: give the name of the environment variable that holds the "
                            "ripple's bearer")
        if not os.environ.get(env):
            state = "empty" if env in os.environ else "not set"
            raise FlagError(f"--ripple-token-env names {env}, which is {state} in this environment: export {env} "
                            "(for a service, in its unit's Environment= or EnvironmentFile=), or name another")
    elif "ripple_token_file" in given:
        token = _token_from_file(str(given["ripple_token_file"]), say)
    else:
        token = str(given["ripple_token"]).strip()
        if not token:
            raise FlagError("--ripple-token is empty: give the ripple's bearer")
        say(SHOWN_IN_PS)
    put("ripple.bearer_token", token)
    put("ripple.bearer_token_env", env)
    put("ripple.bearer_token_keyring", "")


def _token_from_file(path: str, say: Callable[[str], None]) -> str:
    """The file's first line, stripped, read within TOKEN_FILE_BYTES by the config file's rule (a FIFO, device or
    folder is refused unopened: loader.read_head); a file others may read is named (it holds a secret)."""
    fix = "name a file holding the ripple's bearer on its first line"
    try:
        head = read_head(os.path.expanduser(path), TOKEN_FILE_BYTES)
        mode = os.stat(os.path.expanduser(path)).st_mode
        first, newline, _ = head.partition(b"\n")
        if not newline and len(head) > TOKEN_FILE_BYTES:
            raise FlagError(f"--ripple-token-file {path} has no line break within its first {TOKEN_FILE_BYTES} bytes:"
                            f" a bearer is one short line; {fix}")
        token = first.decode("utf-8-sig").strip()      # a BOM off, as the config file is read
    except NotAFile as exc:
        raise FlagError(f"--ripple-token-file {path} {exc}: {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FlagError(f"--ripple-token-file {path} could not be read ({why}): {fix}") from None
    if not token:
        raise FlagError(f"--ripple-token-file {path} is empty: put the ripple's bearer on its first line")
    if os.name != "nt" and mode & 0o077:
        say(f"warning: --ripple-token-file {path} may be read by other accounts (mode {mode & 0o777:o}): "
            f"chmod 600 {path}")
    return token


def _copy(given: dict, put, pairs: tuple) -> None:
    """Each given flag's text onto its setting, stripped and held to the setting's rules (the yaml's words)."""
    for flag, path in pairs:
        if flag in given:
            try:
                put(path, check_value(str(given[flag]).strip(), _rules(path))[0])
            except ValueError as exc:
                raise FlagError(f"--{flag.replace('_', '-')} {exc}") from None


def _ripple_claude(ripple, given: dict, put, say: Callable[[str], None]) -> None:
    from hippocampus.ripple import claude as claude_setup

    if given.get("ripple", "script") != "script":
        raise FlagError(claude_setup.REFUSED_TYPE)
    if "ripple_command" in given:
        raise FlagError("--ripple-claude writes the ripple command itself: give --ripple-claude or "
                        "--ripple-command, not both")
    run_as = ripple.run_as or claude_setup.invoking_account()
    try:
        cr = claude_setup.build(str(given["ripple_claude"]), claude_json=given.get("claude_json"), run_as=run_as)
    except claude_setup.ClaudeSetupError as exc:
        raise FlagError(str(exc)) from None
    if ripple.type != "script":
        put("ripple.type", "script")
    put("ripple.command", cr.command)
    put("ripple.cwd", cr.cwd)
    if not ripple.run_as and run_as:
        put("ripple.run_as", run_as)
    say(f"ripple-claude: {len(cr.servers)} MCP server(s) pre-approved for {cr.cwd} "
        f"({cr.registered.scopes()}; from {cr.registered.settings})")
