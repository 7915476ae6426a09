"""Replay and the quality report as the running service offers them (the routes and the MCP tool share this).

The runtime is duck-typed (cfg, ctx, board): the domain imports neither actors nor HTTP.
"""
from __future__ import annotations

from typing import Any, Optional

from . import quality
from .capture import store_for
from .run import ReplayEnv, replay

BOARD_KEY = "quality"
NOT_YET = {"ready": False, "groups": [], "error": None,
           "message": "the quality report is being read from Memory's drafts, in the background"}


def env_for(rt: Any) -> ReplayEnv:
    return ReplayEnv(cfg=rt.cfg, store=store_for(rt.cfg), memory=rt.ctx.memory, gate=rt.ctx.gate)


def replay_draft(rt: Any, draft_id: str, url: Optional[str] = None, name: Optional[str] = None,
                 extra_body: Optional[dict] = None, timeout_seconds: Optional[float] = None) -> dict:
    """One draft on a candidate. Raises run.NoPacket (no packet) and ValueError (no model to replay on)."""
    return replay(env_for(rt), draft_id, url or None, name or None, extra_body, timeout_seconds)


def report(rt: Any) -> dict:
    """The last report the quality actor published (never read from Memory here)."""
    rep = rt.board.get(BOARD_KEY)
    if not rep:
        return dict(NOT_YET)
    return {**rep, "message": quality.sentence(rep)}


def brief(rt: Any) -> dict:
    """The report's part in sleep_status: the groups without their critique words, and one sentence."""
    rep = report(rt)
    keep = ("model", "voice", "drafts", *quality.COLUMNS, "cut_off_rate", "invented_rate", "critique_words")
    return {"ready": bool(rep.get("ready")), "at": rep.get("at"), "error": rep.get("error"),
            "groups": [{k: g.get(k) for k in keep} for g in rep.get("groups") or []],
            "say": quality.sentence(rep if rep.get("ready") else None)}


def words(result: dict) -> str:
    """A replay's result in one paragraph (the MCP tool's message, the CLI's summary line)."""
    o, c = result["original"]["checks"], result["candidate"]["checks"]
    served = result["candidate"].get("served") or result["candidate"].get("name")

    def one(label: str, k: dict) -> str:
        ov = "n/a" if k.get("overlap_landed") is None else f"{k['overlap_landed']:.2f}"
        return (f"{label}: {k['valid']} operation(s) from {k['calls']} call(s), {k['failed_calls']} failed, "
                f"{k['cut_off']} cut off, {k['invented']} invented number(s)"
                f"{' (' + ', '.join(k['invented_numbers']) + ')' if k['invented_numbers'] else ''}, "
                f"overlap with what landed {ov}, {k['seconds']:.1f} s")
    return (f"Draft {result['draft_id']} (attempt {result.get('attempt')}) replayed on {served} at "
            f"{result['candidate']['url']}. " + one("original", o) + ". " + one("candidate", c) + ". "
            "Nothing was written to Memory.")


def replay_tool(rt: Any, draft_id: str, url: str = "", name: str = "") -> dict:
    """The MCP tool replay_draft: a result with `ok` and a plain-words `message`, never an exception."""
    from .run import NoPacket

    if not (draft_id or "").strip():
        return {"ok": False, "message": "give the draft id to replay (list_drafts on Memory shows them)"}
    if url and not url.lower().startswith(("http://", "https://")):
        return {"ok": False, "message": "the url is the candidate's OpenAI-compatible base URL, "
                                        "e.g. http://127.0.0.1:8091/v1"}
    try:
        result = replay_draft(rt, draft_id.strip(), url or None, name or None)
    except NoPacket as exc:
        return {"ok": False, "found": False, "message": str(exc)}
    except ValueError as exc:
        return {"ok": False, "message": str(exc)}
    return {"ok": True, **result, "message": words(result)}
