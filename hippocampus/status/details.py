"""The narrator's detail lines under the headline: the wake-up line, the model card's rows, the busy note
and each actor's words. Pure: the status (and the headline already said) in, words out.

An error's text appears once: a detail whose error the headline already says points there instead.
"""
from __future__ import annotations

from hippocampus.model.fit import fit_sentence
from hippocampus.status.words import ago, hhmm, n, span

SEE_ABOVE = "see above"


def _once(text: str, headline: str) -> str:
    return SEE_ABOVE if text and text in headline else text


def ripple_end(r: dict) -> str:
    """How one ripple ended: running, exited (after, killed), sent, started or failed."""
    if r.get("running"):
        return "running" + (f" (pid {r['pid']})" if r.get("pid") else "")
    if r.get("exit_code") is not None:
        secs = r.get("seconds")
        after = "" if secs is None else f" after {secs:.1f} s" if secs < 10 else f" after {span(secs)}"
        return f"exited {r['exit_code']}{after}" + (", killed" if r.get("killed") else "")
    if r.get("ok"):
        return ("sent" + (f" (HTTP {r['status']})" if r.get("status") else "")) if r.get("type") == "endpoint" \
            else "started"
    return "failed" + (f" ({r['error']})" if r.get("error") else "")


def wakeup_line(w: dict, now: float, headline: str = "") -> str:
    """"Wake-up: <would it work> · last: <the last ripple per event, newest first>"."""
    if not w:
        return "Wake-up: not checked yet"
    summary = w.get("summary") or "not checked yet"
    if w.get("type") == "off":
        summary = "off: nothing here wakes the main model; it sees what waits the next time it reads its memories"
    if w.get("ok") is False and summary in headline:
        summary = "would fail (" + SEE_ABOVE + ")"
    last = sorted((w.get("last") or {}).items(), key=lambda kv: -(kv[1].get("at") or 0))
    ends = [f"{kind} {ago(r.get('at'), now)}: {ripple_end(r)}" for kind, r in last]
    return "Wake-up: " + summary + (" · last: " + "; ".join(ends) if ends else "")


def model_rows(s: dict, card: dict, now: float, headline: str = "") -> list:
    """The model card's [label, value, level] rows; level is "bad", "good" or ""."""
    ml = s.get("model_lifecycle") or {}
    rows = [["model", card["main"] + (": " + card["sub"] if card.get("sub") else ""),
             "bad" if card.get("level") == "bad" else ""]]
    if s.get("model_configured") or ml.get("managed"):
        if ml.get("managed"):           # only a model started here has a state of its own
            state = ml.get("state") or "unknown"
            rows.append(["state", state, "bad" if state == "failed" else "good" if state == "ready" else ""])
            rows.append(["started by", (ml.get("via") or "local") + (" (this service started it)"
                                                                     if ml.get("started_by_us") else ""), ""])
        else:
            rows.append(["started by", "not started here: it is expected to be always on", ""])
        if ml.get("last_used"):
            rows.append(["last used", ago(ml["last_used"], now), ""])
        if ml.get("managed") and ml.get("keep_warm_seconds") is not None:
            rows.append(["keep warm", span(ml["keep_warm_seconds"]), ""])
        if ml.get("last_error"):
            rows.append(["last error", _once(ml["last_error"], headline), "bad"])
        if s.get("model_structured"):
            rows.append(answer_format_row(s["model_structured"]))
        if s.get("model_fit"):
            rows.append(context_row(s["model_fit"], headline))
    v = s.get("voice") or {}
    rows.append(["voice card", (f"version {v['version']}" if v.get("version") else "on, not written yet")
                 if v.get("enabled") else "off (opt-in)", ""])
    return rows


def context_row(fit: dict, headline: str = "") -> list:
    """The model card's context row: does the largest prompt a sleep can send fit the server's context."""
    if too_long := fit_sentence(fit):
        return ["context", _once(too_long, headline), "bad"]
    if fit.get("error"):
        return ["context", f"not measured: {fit['error']}", ""]
    if fit.get("n_ctx") is None:
        return ["context", "unknown: the server does not say its context (no /props), so the fit is not checked", ""]
    if fit.get("prompt_tokens") is None:
        return ["context", f"{fit['n_ctx']:,} tokens; the prompt was not counted (the server has no /tokenize)", ""]
    return ["context", f"{fit['n_ctx']:,} tokens: the largest prompt ({fit['prompt_tokens']:,} tokens) and "
                       f"the room for its answer ({fit['max_tokens']:,}) fit", "good"]


def answer_format_row(v: dict) -> list:
    """The model card's answer-format row: is each drafting answer held to its JSON schema (model.structured)."""
    if v.get("refused"):
        return ["answer format", f"plain prompt: the server refused the answer's JSON schema ({v['refused']}), "
                                 "so answers are read as free text until the service restarts", ""]
    if v.get("mode") == "off":
        return ["answer format", "plain prompt: the answers are not held to a JSON schema (turned off)", ""]
    return ["answer format", "held to the answer's JSON schema", "good"]


def busy_note(s: dict) -> str:
    busy = s.get("busy")
    return f"{busy.get('what') or 'busy'} running…" if busy else ""


def actor_words(actors: dict) -> dict:
    """name -> {"restarts": "2 restarts", "error": "last error at 12:04: ..." or ""}."""
    return {name: {"restarts": n((a or {}).get("restarts") or 0, "restart"),
                   "error": f"last error at {hhmm(a.get('last_error_at'))}: {a['last_error']}"
                   if (a or {}).get("last_error") else ""}
            for name, a in (actors or {}).items()}
