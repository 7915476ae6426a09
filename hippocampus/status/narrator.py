"""The one narrator: the status in plain words, which /status, the viewer and MCP's sleep_status carry. First
the headline (the one thing to know or do first, with the button that helps), then one line per card and the
details under them; an error's text appears once, and modes are named only where they change what is seen."""
from __future__ import annotations

from typing import Optional

from hippocampus.model import timings
from hippocampus.model.fit import fit_sentence
from hippocampus.status.fresh import (as_of, brief_arrived, brief_when, buttons, model_back, pull_when,
                                      reviewed_since)
from hippocampus.status.lists import CHECK, sleep_words, tend_words
from hippocampus.status.words import ACTOR_WORDS, ago, cap, hhmm, keyless, n, span, until
from hippocampus.words import another_copy, busy as running, failed_wait_words

BAD, BUSY, WAIT, OK = "bad", "busy", "wait", "ok"
LABELS = {BAD: "Something is wrong", BUSY: "Working", WAIT: "Waiting", OK: "Right now"}
SEE_ABOVE = "see above"


def narrate(s: dict, now: float) -> dict:
    text, level, action = headline(s, now)
    busy = s.get("busy")
    busy_note = cap(running(busy.get("what"), busy.get("since"))) if busy else ""
    say = {"headline": text, "level": level, "label": LABELS[level], "action": action,
           "cards": cards(s, now, text), "pills": pills(s), "wakeup": wakeup_line(s.get("wakeup"), now, text),
           "busy": busy_note, "actors": actor_words(s.get("actors")), "buttons": buttons(s, action)}
    say["cards"]["model"]["rows"] = model_rows(s, say["cards"]["model"], now, text)
    return plain(say)


def plain(say: dict) -> dict:
    """The person's words: no config key in the headline, a card or a row; the headline as it was written
    (with its keys) is the details view's ("details")."""
    raw = say["headline"]
    say["headline"], say["wakeup"] = keyless(raw), keyless(say["wakeup"])
    say["details"] = raw if say["headline"] != raw else ""
    for card in say["cards"].values():
        card["main"], card["sub"] = keyless(card["main"]), keyless(card["sub"])
        if "rows" in card:
            card["rows"] = [[k, keyless(v), level] for k, v, level in card["rows"]]
    return say


def model_down(s: dict) -> Optional[str]:
    """The model is configured, not managed here, and not answering: the next sleep would fail."""
    m = s.get("model_health") or {}
    return m.get("error") if m.get("answering") is False else None


def headline(s: dict, now: float) -> tuple:
    """(sentence, level, the action that helps: sleep | tend | restart | None)."""
    mem = s.get("memory") or {}
    if mem.get("reachable") is False and mem.get("not_memory"):
        return (f"{mem['error']}; nothing can sleep until it does.", BAD, None)     # it answers, but not as Memory
    if mem.get("reachable") is False:
        return (f"Memory at {mem.get('url')} is not answering ({mem.get('error') or 'no answer'}): nothing can "
                "sleep until it does.", BAD, None)
    if failed := [name for name, a in (s.get("actors") or {}).items() if (a or {}).get("state") == "failed"]:
        one = len(failed) == 1
        parts = " and ".join(ACTOR_WORDS.get(name, "a part of the service") for name in failed)
        return (f"{cap(parts)} crashed too often and {'is' if one else 'are'} down: press "
                f"Restart beside {'it' if one else 'each'} under Details.", BAD, "restart")
    if writes := [s[key] for key in ("state_error", "events_error", "scrub_error") if s.get(key)]:
        return (" ".join(w.rstrip(".") + "." for w in writes), BAD, None)
    if broken := _broken(s, now):
        return broken
    if busy := s.get("busy"):
        prog = s.get("progress") or {}
        piles = f": {prog.get('piles_done', 0)} of {prog['piles']} pile(s) drafted" if prog.get("piles") else ""
        return (f"{cap(running(busy.get('what'), busy.get('since')))}{piles}.", BUSY, None)
    return _waiting(s, now)


def _broken(s: dict, now: float) -> Optional[tuple]:
    last = s.get("last_sleep") or {}
    if last.get("error"):
        briefed = bool(last.get("brief_id"))        # a sleep by hand without a brief kept none
        if model_back(s, last.get("finished_at")) and "model" in str(last["error"]):
            turn = "nudge" if s.get("mode") == "external" else "check"        # no clock of its own: a nudge
            again = f"the next {turn} sleeps on the same brief" if briefed else "Sleep now tries it again"
            return (f"The last sleep failed at {hhmm(last.get('finished_at'))} because the model did not answer; it "
                    f"answers again now, so {again}.", WAIT, "sleep")
        retry = (last.get("retry_at") or 0) > now
        then = f"; the model's start is tried again at {hhmm(last['retry_at'])}" if retry else ""
        if briefed and (last.get("next_try_at") or 0) > now and not then:
            then = "; " + failed_wait_words(last.get("failures"), last["next_try_at"])
        kept = (f"Its brief is kept{then or ' for the next check'}" if briefed
                else f"No brief was involved{then or ', and Sleep now tries it again'}")
        return (f"The last sleep failed at {hhmm(last.get('finished_at'))}: {last['error']}. {kept}.", BAD, "sleep")
    if (spent := last.get("budget") or {}).get("rest_until", 0) > now and not last.get("draft_id"):
        return (f"The last sleep stopped drafting early at {hhmm(last.get('finished_at'))}: {spent.get('reason')}. "
                f"{'Its brief and undrafted' if last.get('brief_id') else 'Its undrafted'} fragments are kept; "
                f"the next sleep waits for bedtime, {hhmm(spent['rest_until'])}.", BAD, "sleep")
    if (down := model_down(s)) and (s.get("model_health") or {}).get("not_model"):
        return (f"{cap(down)}. The next sleep fails until then.", BAD, None)   # it answers, no model
    if down:
        return (f"The model at {s.get('model_url')} is configured but not answering ({down}): the next sleep "
                "fails until it does.", BAD, None)
    if too_long := fit_sentence(s.get("model_fit")):
        return (f"The model's context is too small: {too_long}. Until then a full pile's answers are lost.",
                BAD, None)
    lc = s.get("model_lifecycle") or {}
    if lc.get("state") == "failed" and lc.get("last_error"):
        return (f"The model failed to start: {lc['last_error']}.", BAD, None)
    check = s.get("last_check") or {}
    if check.get("status") == "error":
        return (f"The last check failed at {hhmm(check.get('at'))}: {check.get('error')}.", BAD, None)
    tend = s.get("last_tend") or {}
    if tend.get("error"):
        return (f"The last tend failed at {hhmm(tend.get('finished_at'))}: {tend['error']}.", BAD, "tend")
    wake = s.get("wakeup") or {}
    if wake.get("ok") is False:
        return (f"A wake-up of the main model {wake.get('summary') or 'would fail'} "
                "(seren-hippocampus check-ripple says how to fix it).", BAD, None)
    return (said, BAD, None) if (said := (s.get("gave_up") or {}).get("said")) else None    # till the next sleep


def _waiting(s: dict, now: float) -> tuple:
    check = s.get("last_check") or {}
    if check.get("status") == "other_copy":
        other = check.get("other") or {}
        until_ = f" until {hhmm(other['until'])}" if other.get("until") else ""
        return (f"{cap(another_copy(other))}{until_}: this copy leaves it to that one. Two copies on one Memory "
                "take turns; stop one of them unless you meant to run both.", WAIT, None)
    chain = s.get("chain") or {}
    landed = [] if s.get("chain") else (s.get("review") or {}).get("landed")    # before the first check: closed next
    if chain.get("waiting_draft") and reviewed_since(s) or landed:
        turn, also = ("nudge", "") if s.get("mode") == "external" else ("check", "a nudge or ")   # no clock: a nudge
        return (f"The draft under review was decided in Memory: the next {turn} takes it from there ({also}"
                "Tend now does it at once).", WAIT, "tend")
    if waiting := chain.get("waiting_draft"):
        age = span(now - float(waiting.get("created_at") or now))
        ops, left = waiting.get("operations") or 0, waiting.get("pending")
        some = f", {n(left, 'operation')} still to decide" if left is not None and left != ops else ""  # partly
        return (f"A draft ({n(ops, 'operation')}{some}) has waited "
                f"{age} for review in Memory: review it, then nudge.", WAIT, None)
    # before the first check (no snapshot yet): the queue watch's read of the chains waiting for a redraft
    due = chain.get("redrafts_due") or (0 if s.get("chain") else len((s.get("review") or {}).get("redrafts") or []))
    if due and (failed := s.get("redraft_failed")):
        first = failed["model_failures"][0]
        more = f"; and {len(failed['model_failures']) - 1} more" if len(failed["model_failures"]) > 1 else ""
        return (f"The small model could not write the redraft at {hhmm(failed.get('finished_at'))} "
                f"({first.get('topic') or 'untagged'}: {first.get('why')}{more}), so the denied operations still "
                "wait. Fix what that says (the model or its settings), then press Tend now to try again.", BAD, "tend")
    if due:
        if s.get("redrafts_waiting_since") and not s.get("tend_cycle"):     # on: they wait for its next turn
            return (f"Denied operations have waited since {hhmm(s['redrafts_waiting_since'])} for sleep time "
                    "(the tend cycle is off): Tend now redrafts them.", WAIT, "tend")
        return (f"{n(due, 'chain')} with denied operations wait for a redraft: nudge, or "
                "Tend now.", WAIT, "tend")
    queue = [] if s.get("chain") else (s.get("review") or {}).get("drafts") or []     # before the first check
    if queue:       # a chain is open: the next check sleeps on no brief (one waiting may be the chain's own)
        return (f"{n(queue, 'draft')} from an earlier sleep {'waits' if len(queue) == 1 else 'wait'} for review in "
                f"Memory: review {'it' if len(queue) == 1 else 'them'}, then nudge.", WAIT, None)
    if chain.get("brief_id") or brief_arrived(s) or (not s.get("chain") and (s.get("review") or {}).get("briefs")):
        return (f"A brief from the main model is waiting in Memory: it is slept on {brief_when(s, now)}.", WAIT,
                "sleep")
    bed = s.get("bedtime_at")
    if s.get("brief_wanted"):
        off = (s.get("wakeup") or {}).get("type") == "off"
        who = "; nothing here wakes the main model, so it finds the note the next time it reads its memories"
        return (f"Waiting for a brief from the main model: a note asking for one has been in Memory since "
                f"{hhmm(s.get('brief_requested_at'))}{who if off else ''}{pull_when(s, '; or ')}.", WAIT, None)
    if bed and bed <= now:
        return ("Past bedtime with no brief: the sleep starts once the main model writes one"
                f"{pull_when(s, ', or ')}.", WAIT, "sleep")
    return (f"Quiet and healthy; bedtime {until(bed, now)}; no brief yet.", OK, "sleep")


def cards(s: dict, now: float, headline: str = "") -> dict:
    brief = _brief(s, now)
    brief["sub"] += as_of(s)
    return {"last_sleep": _last_run(s, now, headline, "sleep", _check_tail(s, now)), "bedtime": _bedtime(s, now),
            "brief": brief, "last_tend": _last_run(s, now, headline, "tend"), "tick": _tick(s, now), "model": _model(s)}


def _line(main: str, sub: str, level: str = OK) -> dict:
    return {"main": main, "sub": sub, "level": level}


def _check_tail(s: dict, now: float) -> str:
    """What the last check found, unless it is no longer so (a chain it saw open has closed since)."""
    check = s.get("last_check") or {}
    status = check.get("status")
    if not status or status in ("error", "other_copy"):
        return ""
    if status == "chain_open" and not (s.get("chain") or {}).get("chain_open"):
        return ""
    return f" · last check {ago(check.get('at'), now)}: {CHECK.get(status, status)}"


def _error_words(s: dict, error: str, headline: str, words: str) -> str:
    """An error's text once: "see above" when the headline says it (or that Memory, which it names, is down)."""
    if error and error in headline:
        return SEE_ABOVE
    mem = s.get("memory") or {}
    if error and mem.get("reachable") is False and mem.get("url") and mem["url"] in error:
        return "failed: Memory did not answer (see above)"
    return words


# the last sleep's or tend's card says the first of these the run did
RUN_MAIN = {"sleep": (("error", "Failed"), ("budget", "Stopped early"), ("draft_id", "Drafted"), ("quiet", "Quiet"),
                      ("interrupted", "Interrupted"), (None, "Ran")),
            "tend": (("error", "Failed"), ("interrupted", "Interrupted"), ("model_failures", "Could not redraft"),
                     ("resubmitted", "Did work"), ("closed", "Did work"), (None, "Quiet"))}


def _last_run(s: dict, now: float, headline: str, kind: str, tail: str = "") -> dict:
    """The last sleep's or tend's card: what it did, when, and (for a sleep) what the last check found."""
    last = s.get(f"last_{kind}")
    if not last:
        return _line("Never", f"no {kind} has run yet{tail}")
    main = next(word for key, word in RUN_MAIN[kind] if key is None or last.get(key))
    said = tend_words(last, bool(s.get("tend_cycle"))) if kind == "tend" else sleep_words(last)
    words = _error_words(s, last.get("error"), headline, said)
    failed = last.get("error") or (kind == "tend" and last.get("model_failures"))
    return _line(main, f"{ago(last.get('finished_at') or last.get('started_at'), now)} · {words}{tail}",
                 BAD if failed else OK)


def _bedtime(s: dict, now: float) -> dict:
    bed = s.get("bedtime_at")
    every = f"daily at {s['sleep_at']}" if s.get("sleep_at") else f"every {span(s.get('interval_seconds') or 0)}"
    catch = " · the next sleep is a catch-up" if s.get("catch_up_next") else ""
    if not bed:
        return _line("Unknown", every)
    if bed > now:
        return _line(f"in {span(bed - now)}", f"at {hhmm(bed)} · {every}{catch}")
    return _line("Now", f"due since {hhmm(bed)}; it sleeps when a brief arrives · {every}{catch}")


def _brief(s: dict, now: float) -> dict:
    chain = s.get("chain") or {}
    misses = f" · {n(s['brief_misses'], 'check')} past bedtime without one" if s.get("brief_misses") else ""
    if chain.get("chain_brief_id") and chain.get("chain_open"):
        more = "; another brief waits its turn" if chain.get("brief_id") else ""
        what = "draft under review" if chain.get("under_review") else "chain whose denials wait for a redraft"
        return _line("In use", f"the brief that opened the {what}{more}")
    if chain.get("brief_id") or brief_arrived(s):
        return _line("Waiting", f"a brief is waiting: it is slept on {brief_when(s, now)}", WAIT)
    if not s.get("chain"):           # before the first check: the queue watch's read of Memory's open briefs
        briefs = (s.get("review") or {}).get("briefs")
        if briefs is None:
            return _line("Checking", "not read from Memory yet")
        if briefs and ((queue := s.get("review") or {}).get("drafts") or queue.get("redrafts") or queue.get("landed")):
            first = ("a draft under review" if queue.get("drafts") else "the redraft of denied operations"
                     if queue.get("redrafts") else "closing the chain that landed")
            return _line("Open", f"{n(briefs, 'brief')} open in Memory; {first} comes first")
        if briefs:
            return _line("Waiting", f"{n(briefs, 'brief')} open in Memory: slept on {brief_when(s, now)}", WAIT)
    if s.get("brief_wanted"):
        return _line("Wanted", f"asked the main model {ago(s.get('brief_requested_at'), now)}; waiting{misses}",
                     WAIT)
    return _line("Not asked for yet", f"a brief from the main model starts a sleep{misses}")


def _tick(s: dict, now: float) -> dict:
    ticking = ["ticking now"] if s.get("ticking") else []
    if s.get("mode") == "external":         # a nudged tick redrafts whatever the tend cycle says
        return _line("When asked", " · ".join(["no clock of its own: it takes a turn when the main model nudges it, "
                                               "or when you press Sleep now or Tend now", *ticking,
                                               "each nudge redrafts what was denied"]))
    upcoming = [f"next tick {until(s['next_tick_at'], now)}"] if s.get("next_tick_at") else []
    tend = (f"tend cycle on: redrafts every {span(s.get('tend_interval_seconds') or 0)}" if s.get("tend_cycle")
            else "tend cycle off: redrafts wait for sleep time")
    return _line(f"Every {span(s.get('tick_seconds') or 0)}", " · ".join([*upcoming, *ticking, tend]))


def _model(s: dict) -> dict:
    if not s.get("model_configured"):
        return _line("Mechanical", "no model configured: clusters become cores by their longest entry")
    lc = s.get("model_lifecycle") or {}
    if model_down(s) and (s.get("model_health") or {}).get("not_model"):
        return _line("Not a model server", f"{s.get('model_url')} answers, but lists no models", BAD)
    if model_down(s):
        return _line("Not answering", f"{s.get('model_url')} does not answer", BAD)
    if lc.get("managed"):
        return _line(f"Managed: {lc.get('state') or 'unknown'}", "started when a sleep or redraft needs it",
                     BAD if lc.get("state") == "failed" else OK)
    health = s.get("model_health") or {}
    return _line("Answering" if health.get("answering") else "Checking", str(s.get("model_url") or ""))


def pills(s: dict) -> dict:
    memory = {True: ("memory: reachable", "ok"), False: ("memory: unreachable", "hot")}.get(
        (s.get("memory") or {}).get("reachable"), ("memory: checking…", ""))
    card = _model(s)
    state = "hot" if card["level"] == BAD else "ok" if card["main"].startswith(("Answering", "Managed")) else ""
    return {"memory": {"text": memory[0], "state": memory[1]},
            "model": {"text": "model: " + card["main"].lower(), "state": state}}


def _once(text: str, headline: str) -> str:
    return SEE_ABOVE if text and text in headline else text


def ripple_end(r: dict) -> str:
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
    w = w or {}
    summary = w.get("summary") or "not checked yet"
    if w.get("type") == "off":
        summary = "off: nothing here wakes the main model; it sees what waits the next time it reads its memories"
    if w.get("ok") is False and summary in headline:
        summary = "would fail (" + SEE_ABOVE + ")"
    last = sorted((w.get("last") or {}).items(), key=lambda kv: -(kv[1].get("at") or 0))
    ends = [f"{kind.replace('_', ' ')} {ago(r.get('at'), now)}: {ripple_end(r)}" for kind, r in last]
    return "Wake-up: " + summary + (" · last: " + "; ".join(ends) if ends else "")


def model_rows(s: dict, card: dict, now: float, headline: str = "") -> list:
    """The model card's [label, value, level] rows; level is "bad", "good" or ""."""
    ml = s.get("model_lifecycle") or {}
    rows = [["model", card["main"] + (": " + card["sub"] if card.get("sub") else ""),
             "bad" if card.get("level") == "bad" else ""]]
    if s.get("model_configured") or ml.get("managed"):
        if ml.get("managed"):
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
        for key, row in (("model_structured", answer_format_row), ("model_write", drafting_row),
                         ("model_fit", lambda fit: context_row(fit, headline))):
            if s.get(key):
                rows.append(row(s[key]))
        if tokens := timings.words((s.get("last_sleep") or {}).get("tokens")):
            rows.append(["last sleep's tokens", tokens, ""])
    v = s.get("voice") or {}
    rows.append(["voice card", v["error"], "bad"] if v.get("error") else
                ["voice card", (f"version {v['version']}" if v.get("version") else "on, not written yet")
                 if v.get("enabled") else "off (opt-in)", ""])
    return rows


def context_row(fit: dict, headline: str = "") -> list:
    """Does the largest prompt a sleep can send fit the server's context?"""
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
    """Is each drafting answer held to its JSON schema?"""
    if v.get("refused"):
        return ["answer format", f"plain prompt: the server refused the answer's JSON schema ({v['refused']}), "
                                 "so answers are read as free text until the service restarts", ""]
    if v.get("mode") == "off":
        return ["answer format", "plain prompt: the answers are not held to a JSON schema (turned off)", ""]
    return ["answer format", "held to the answer's JSON schema", "good"]


def drafting_row(v: dict) -> list:
    """Does the small model write its operations, or only choose fragments (model.write)? And why."""
    return ["drafting", f"{v.get('mode') or 'not chosen yet'}: {v.get('why') or ''}".rstrip(": "), ""]


def actor_words(actors: dict) -> dict:
    """name -> {"restarts": "2 restarts", "error": "last error at 12:04: ..." or ""}."""
    return {name: {"restarts": n((a or {}).get("restarts") or 0, "restart"),
                   "error": f"last error at {hhmm(a.get('last_error_at'))}: {a['last_error']}"
                   if (a or {}).get("last_error") else ""}
            for name, a in (actors or {}).items()}
