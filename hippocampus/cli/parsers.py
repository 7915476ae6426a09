"""The subcommands' arguments, for the console parser: defined here, so that building the parser imports
none of the subcommands' code (each is imported by main() when it runs; `serve` never imports one)."""
from __future__ import annotations

import argparse

from hippocampus.config.candidates import TIMEOUT_CAP

REPLAY_DESCRIPTION = ("Send past drafts' saved prompts (the replay packets beside the state file) to a candidate "
                      "small model, exactly as they were sent then, read its answers the way a sleep reads them, and "
                      "compare both sides: operations that parse, failed calls, cut-off answers, invented numbers or "
                      "dates, word overlap with what landed in Memory, seconds. Nothing is written to Memory.")


def add_check_config_command(sub, after: argparse.ArgumentParser, card: argparse.ArgumentParser) -> None:
    p = sub.add_parser("check-config", parents=[after, card],
                       help="print the resolved config (secrets hidden) and every warning, after trying what it "
                            "names (Memory, the model, the model server and its files, the ripple command); "
                            "exit 1 when there were warnings")
    p.add_argument("--offline", action="store_true",
                   help="check the config alone: reach nothing (no Memory, model, file or PATH probes)")


def global_after(*, config: bool = True) -> argparse.ArgumentParser:
    """The global options again, for after the subcommand (`serve --log-level DEBUG`, `check-config --config
    FILE`): a parent parser whose defaults are SUPPRESS, so an option given before the subcommand stays."""
    from hippocampus import SERVICE, __version__

    after = argparse.ArgumentParser(add_help=False)
    if config:
        after.add_argument("--config", "-c", default=argparse.SUPPRESS, help="the yaml config")
    after.add_argument("--log-level", default=argparse.SUPPRESS, metavar="LEVEL",
                       help="DEBUG, INFO, WARNING or ERROR")
    after.add_argument("--version", action="version", version=f"{SERVICE} {__version__}",
                       help="print the installed version and exit")
    return after


def add_ripple_commands(sub, after: argparse.ArgumentParser, card: argparse.ArgumentParser) -> None:
    rc = sub.add_parser(
        "ripple-claude", parents=[global_after(config=False)],
        help="print the ripple block that wakes Claude Code in DIR (with --yaml N: the command and cwd "
             "lines, indented N spaces, as the installer card writes them)")
    rc.add_argument("folder", metavar="DIR", help="the project folder you run `claude` in")
    rc.add_argument("--yaml", type=int, metavar="N", default=None,
                    help="print only the two lines `command: [...]` and `cwd: \"...\"`, indented N spaces")
    rc.add_argument("--claude-json", metavar="PATH", default=None,
                    help="the Claude Code settings to read (else $SEREN_CLAUDE_JSON, else ~/.claude.json)")
    rc.add_argument("--run-as", metavar="USER", default=None,
                    help="the account the ripple runs as, whose ~/.claude.json is read (default: you)")
    chk = sub.add_parser(
        "check-ripple", parents=[after, card],
        help="check that a wake-up of the main model would work, one line per precondition (ok, or what "
             "is wrong and how to fix it); exit 1 when any is not ok")
    chk.add_argument("--fire", action="store_true",
                     help="also send one harmless wake-up through the real route and report its exit code, "
                          "time and first lines of output")
    chk.add_argument("--timeout", type=float, metavar="SECONDS", default=None,
                     help="how long --fire waits for the command (default ripple.timeout_seconds)")


def add_replay_command(sub, after: argparse.ArgumentParser) -> None:
    p = sub.add_parser("replay", parents=[after], help="replay past drafts on a candidate small model and compare",
                       description=REPLAY_DESCRIPTION)
    p.add_argument("draft_id", nargs="?", help="the draft to replay (its id, as in Memory's list_drafts); "
                                               "or use --last N")
    p.add_argument("--last", type=int, metavar="N", help="replay the newest N drafts that have a packet and print "
                                                         "one table with a total line")
    p.add_argument("--candidate", metavar="NAME", help="the candidate to replay on: a name listed in the config's "
                                                        "replay.candidates (default: the configured model, model.url)")
    p.add_argument("--model-url", metavar="URL", help="no longer taken: list the candidate's URL in "
                                                       "replay.candidates and name it with --candidate")
    p.add_argument("--model-name", metavar="NAME", help="the model name sent to the candidate (default: the "
                                                        "candidate's model, or model.name)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="seconds each candidate call may take (default: the candidate's timeout_seconds or "
                        f"model.timeout_seconds; at most {TIMEOUT_CAP:g}); a call that takes longer is a failed "
                        "call in the result")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON instead of the summary")
