// ── SerenHippocampus: the window ─────────────────────────────────────
// Three questions at a glance: did the sleep run (and when is the next one),
// what waits for review in Memory, and when it broke, what broke.
// Every refresh updates text in place; a list is redrawn only when its
// markup changed, so nothing flickers.
const HX = {
  hiddenEvery: 30000,   // ms between refreshes while the tab is hidden
  every: 750,           // ms between refreshes: while it looks, the service reads Memory on every beat
  timer: null,
  inflight: false,
  tab: "overview",
  status: null,
  askedWith: null,      // the token in use when the modal was last opened on a 401
  acting: false,
};

// ---------------------------------------------------------------- helpers
function $(id){ return document.getElementById(id); }
function setText(id, text){
  const el = typeof id === "string" ? $(id) : id;
  const t = text == null ? "" : String(text);
  if (el && el.textContent !== t) el.textContent = t;
}
function setHtml(id, html){
  const el = typeof id === "string" ? $(id) : id;
  if (el && el._hx !== html){ el.innerHTML = html; el._hx = html; }
}
// a keyed list: rows are kept by key and only a row whose markup changed is touched
const _tpl = document.createElement("template");
function setRows(id, items, keyOf, rowHtml, emptyHtml){
  const box = $(id);
  if (!box) return;
  if (!items.length){ box._rows = null; setHtml(box, emptyHtml); return; }
  if (!box._rows){ box.innerHTML = ""; box._hx = null; box._rows = new Map(); }
  const seen = new Set();
  let prev = null;
  for (const it of items){
    const key = String(keyOf(it));
    seen.add(key);
    const html = rowHtml(it);
    let el = box._rows.get(key);
    if (!el || el._hx !== html){
      _tpl.innerHTML = html.trim();
      const fresh = _tpl.content.firstElementChild;
      if (!el){ el = fresh; box._rows.set(key, el); }
      else {
        for (const a of Array.from(el.attributes)) if (!fresh.hasAttribute(a.name)) el.removeAttribute(a.name);
        for (const a of Array.from(fresh.attributes)) if (el.getAttribute(a.name) !== a.value) el.setAttribute(a.name, a.value);
        el.innerHTML = fresh.innerHTML;
      }
      el._hx = html;
    }
    const want = prev ? prev.nextSibling : box.firstChild;
    if (want !== el) box.insertBefore(el, want);
    prev = el;
  }
  for (const [key, el] of Array.from(box._rows)) if (!seen.has(key)){ el.remove(); box._rows.delete(key); }
}
function show(id, on){
  const el = typeof id === "string" ? $(id) : id;
  if (el && el.hidden === !!on) el.hidden = !on;
}
function setClass(id, cls, on){
  const el = typeof id === "string" ? $(id) : id;
  if (el && el.classList.contains(cls) !== !!on) el.classList.toggle(cls, !!on);
}

// the one clock: a time the service gives as epoch seconds, in this browser's locale (12- or 24-hour); hhmm
// adds the day when it is not today
function clock(ts){ return new Date(ts * 1000).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit"}); }
function hhmm(ts){
  if (!ts) return "";
  const d = new Date(ts * 1000), now = new Date(), t = clock(ts);
  if (d.toDateString() === now.toDateString()) return t;
  const tomorrow = new Date(now); tomorrow.setDate(now.getDate() + 1);
  const yesterday = new Date(now); yesterday.setDate(now.getDate() - 1);
  if (d.toDateString() === tomorrow.toDateString()) return "tomorrow " + t;
  if (d.toDateString() === yesterday.toDateString()) return "yesterday " + t;
  return d.toLocaleDateString([], {weekday: "short", day: "numeric", month: "short"}) + " " + t;
}
function span(seconds){
  const s = Math.abs(seconds);
  if (s < 10) return (Math.round(s * 10) / 10) + " s";
  if (s < 60) return Math.round(s) + " s";
  const m = Math.round(s / 60);
  if (m < 60) return m + " min";
  if (s < 86400){
    const h = Math.floor(m / 60), mm = m % 60;
    return mm ? h + " h " + mm + " min" : h + " h";
  }
  const hours = Math.round(s / 3600), d = Math.floor(hours / 24), h = hours % 24;
  return h ? d + " d " + h + " h" : d + " d";
}
function rel(ts){
  if (!ts) return "";
  const diff = ts - Date.now() / 1000;
  if (Math.abs(diff) < 20) return "just now";
  return diff > 0 ? "in " + span(diff) : span(diff) + " ago";
}
function relAbs(ts){ return ts ? rel(ts) + " (" + hhmm(ts) + ")" : ""; }
// each "HH:MM" the service wrote comes with its epoch (`times`), shown in the one clock as every other time
function lt(text, times){
  if (!text || !times) return text == null ? "" : String(text);
  return String(text).replace(/\b\d\d:\d\d\b/g, m => (m in times ? clock(times[m]) : m));
}

// fetch with the saved bearer; keeps the status and the family's {"detail"} on errors
async function hx(path, opts){
  const o = Object.assign({method: "GET"}, opts || {});
  const headers = {"Accept": "application/json"};
  const tok = getToken();
  if (tok) headers["Authorization"] = "Bearer " + tok;
  let res;
  try {
    res = await fetch(path, {method: o.method, headers, cache: "no-store"});
  } catch (e) {
    return {ok: false, status: 0, data: null, detail: "the service did not answer (" + e.message + ")"};
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  const detail = data && typeof data === "object" && data.detail ? data.detail : (res.status + " " + res.statusText);
  if (res.status === 401) askForToken();
  else if (res.ok) tokenAccepted();
  return {ok: res.ok, status: res.status, data, detail};
}

// ---------------------------------------------------------------- the bearer
// Asked once: the modal opens on the first 401 for a given token (none, or one
// the service refused); cancelled, it stays shut and the page says why.
function askForToken(){
  const tok = getToken();
  HX.needToken = true;
  renderAuth();
  if (HX.askedWith === tok) return;
  HX.askedWith = tok;
  openToken();
  setTimeout(() => { const i = $("tokenInput"); if (i) i.focus(); }, 0);
}
function tokenAccepted(){
  if (HX.needToken){ HX.needToken = false; renderAuth(); }
}
function renderAuth(){
  if (HX.needToken){
    const tok = getToken();
    setClass("explainCard", "bad", true);
    setText("explainLabel", "Needs the bearer token");
    setText("explainText", tok ? "The service refused the saved token. Press Token (top right) and paste the right one."
                               : "This service runs with a bearer token. Press Token (top right) and paste it; this browser keeps it.");
    setClass("tokenBtn", "primary", true);
  } else {
    setClass("tokenBtn", "primary", false);
  }
}
(function wireToken(){
  const save = document.querySelector("#tokenModal button.primary");
  if (save) save.addEventListener("click", () => hxRefresh(true));
  const input = $("tokenInput");
  if (input) input.addEventListener("keydown", e => {
    if (e.key === "Enter"){ e.preventDefault(); saveToken(); hxRefresh(true); }
  });
  // a token saved in another tab of the same browser
  window.addEventListener("storage", e => { if (e.key === TOKEN_KEY) hxRefresh(true); });
})();

// ---------------------------------------------------------------- words
// The status words are the service's narrator's (hippocampus/status/: the headline, the cards, the
// wake-up line, the model rows, the actors; the queue's, the quality report's and the events' words come
// with /queue, /quality and /events): this script lays them out and writes none of its own. What a
// button's answer says comes with the answer (`say`).
function resultWords(res){
  if (res.status === 409) return {cls: "warn", text: "Busy: " + res.detail.replace(/^busy:\s*/i, "")};
  if (res.status === 401) return {cls: "bad", text: "Needs the bearer token: press Token (top right)."};
  if (!res.ok) return {cls: "bad", text: res.detail};
  const r = res.data || {};
  if (r.running) return {cls: "", text: r.detail};
  const say = r.say || {level: "", text: ""};
  return {cls: say.level === "ok" ? "" : say.level, text: say.text};
}

// ---------------------------------------------------------------- actions
async function act(btnId, path, words, busyText){
  if (HX.acting) return;
  HX.acting = true;
  const btn = $(btnId), label = btn.textContent;
  btn.disabled = true; btn.textContent = busyText;
  show("actionResult", true);
  $("actionResult").className = "result";
  setText("actionResult", busyText);
  try {
    const res = await hx(path, {method: "POST"});
    const w = words(res);
    $("actionResult").className = "result " + w.cls;
    setText("actionResult", w.text + "  (" + hhmm(Date.now() / 1000) + ")");
  } finally {
    btn.disabled = false; btn.textContent = label;
    HX.acting = false;
    hxRefresh(true);
  }
}
function hxSleep(){ return act("sleepBtn", "/sleep", resultWords, "Sleeping…"); }
function hxTend(){ return act("tendBtn", "/tend", resultWords, "Tending…"); }

async function hxRestart(name, btn){
  if (btn){ btn.disabled = true; btn.textContent = "Restarting…"; }
  const res = await hx("/actors/" + encodeURIComponent(name) + "/restart", {method: "POST"});
  show("actorResult", true);
  $("actorResult").className = "result small " + (res.ok ? "good" : "bad");
  setText("actorResult", res.ok ? (res.data || {}).say || "" : "Could not restart " + name + ": " + res.detail);
  hxRefresh(true);
}
// the Restart buttons are redrawn with the actor rows: one listener for them all (the page's CSP runs
// no inline handler)
document.addEventListener("click", e => {
  const btn = e.target.closest ? e.target.closest("button.restart[data-name]") : null;
  if (btn && !btn.disabled) hxRestart(btn.dataset.name, btn);
});

// ---------------------------------------------------------------- render: status
function card(prefix, statId, c, times){
  setText(prefix + "What", lt(c.main, times));
  setText(prefix + "When", lt(c.sub, times));
  setClass(statId, "bad", c.level === "bad");
  setClass(statId, "warn", c.level === "wait");
}

function renderStatus(s){
  HX.status = s;
  const say = s.say || {cards: {}, pills: {}};
  const T = say.times || {};
  // header pills
  const mem = s.memory || {}, pills = say.pills || {};
  for (const [id, p] of [["memPill", pills.memory], ["modelPill", pills.model]]){
    if (!p) continue;
    setText(id, p.text);
    setClass(id, "hot", p.state === "hot");
    setClass(id, "ok", p.state === "ok");
  }
  $("memPill").title = mem.url || "";

  // the narrator's headline, prominent, and the button that helps highlighted
  if (!HX.needToken){
    setClass("explainCard", "bad", say.level === "bad");
    setText("explainLabel", say.label || "Right now");
    setText("explainText", lt(say.headline, T));
  }
  renderButtons(say.buttons);
  // the headline as written, with the settings' names, for whoever changes them
  setText("detailsHeadline", say.details ? "In the settings' words: " + lt(say.details, T) : "");
  show("detailsHeadline", !!say.details);
  show("explainSub", false);
  setText("wakeupLine", lt(say.wakeup, T));

  const c = say.cards || {};
  if (c.last_sleep) card("lastSleep", "statLastSleep", c.last_sleep, T);
  if (c.last_tend) card("lastTend", "statTend", c.last_tend, T);
  if (c.bedtime){ setText("bedtimeRel", lt(c.bedtime.main, T)); setText("bedtimeAbs", lt(c.bedtime.sub, T)); }
  if (c.brief){ setText("briefWhat", c.brief.main); setText("briefMore", lt(c.brief.sub, T)); setClass("statBrief", "warn", c.brief.level === "wait"); }
  if (c.tick){ setText("tickWhat", c.tick.main); setText("tendCycleWhat", lt(c.tick.sub, T)); }

  renderActors(s.actors || {}, say.actors || {}, T);
  renderModel(c.model || {}, T);
}

// the main button is the one that fits the state (the narrator's `buttons`); while a cycle runs or Memory
// is down neither can be pressed, and the note beside them says why
function renderButtons(b){
  if (!b) return;
  for (const [id, key] of [["sleepBtn", "sleep"], ["tendBtn", "tend"]]){
    const one = b[key] || {}, btn = $(id);
    setClass(btn, "primary", !!one.primary);
    if (!HX.acting && btn.disabled !== !!one.disabled) btn.disabled = !!one.disabled;
  }
  if (!HX.acting) setText("busyNote", b.why || "");
}

const ACTOR_ORDER = ["scheduler", "sleeper", "chain", "lifecycle", "ripple", "notifier"];
function renderActors(actors, words, times){
  const names = Object.keys(actors).sort((a, b) => {
    const ia = ACTOR_ORDER.indexOf(a), ib = ACTOR_ORDER.indexOf(b);
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b);
  });
  setRows("actorsList", names, n => n, n => {
    const a = actors[n] || {}, w = words[n] || {};
    const st = a.state || "unknown";
    const cls = st === "running" ? "ok" : st === "failed" ? "bad" : "warn";
    let html = '<div class="row actor" data-actor="' + escapeHtml(n) + '" data-state="' + escapeHtml(st) + '">'
      + '<div class="row-head"><span class="dot ' + cls + '"></span><b class="actor-name">' + escapeHtml(n) + '</b>'
      + '<span class="badge ' + cls + '">' + escapeHtml(st) + '</span>'
      + '<span class="muted">' + escapeHtml(w.restarts || "") + '</span>';
    if (st === "failed")
      html += '<span class="grow"></span><button class="btn small primary restart" data-name="' + escapeHtml(n)
           + '">Restart</button>';
    html += '</div>';
    if (w.error) html += '<div class="row-sub err">' + escapeHtml(lt(w.error, times)) + '</div>';
    return html + '</div>';
  }, '<p class="muted">No actors reported yet.</p>');
  // a part that is down needs its Restart button seen: the details open by themselves
  if (names.some(n => (actors[n] || {}).state === "failed")) $("detailsView").open = true;
}

// the narrator's rows: [label, value, level]
const ROW_CLASS = {bad: "err", good: "okc"};
function renderModel(card, times){
  setHtml("modelList", (card.rows || []).map(([k, v, level]) =>
    '<dt>' + escapeHtml(k) + '</dt><dd class="' + (ROW_CLASS[level] || "") + '">' + escapeHtml(lt(v, times)) + '</dd>').join(""));
}

// ---------------------------------------------------------------- render: queue
function renderQueue(q){
  const say = q.say || {};
  setText("queueCount", q.error && !q.as_of ? "?" : String((q.drafts || []).length));
  setText("queueNote", lt(say.note, q.times));
  $("queueNote").title = q.error || "";      // the why, on hover: the headline names Memory once
  setClass("queueNote", "err", say.level === "bad");
  // the draft's id and its summary as written are the details' (a <details> per row)
  setRows("queueList", q.drafts || [], d => d.id, d => '<div class="row draft" data-draft-id="' + escapeHtml(d.id) + '">'
      + '<div class="row-head"><b>' + escapeHtml(d.title || d.summary || "(no summary)") + '</b></div>'
      + '<div class="row-sub">' + escapeHtml(d.say || "")
      + ((d.kind_words || []).length ? ' · ' + d.kind_words.map(k => '<span class="kind">' + escapeHtml(k) + '</span>').join(" ") : "")
      + '</div><details class="tech"><summary>Details</summary><div class="row-id mono">draft ' + escapeHtml(d.id)
      + '</div><div class="row-id mono">' + escapeHtml(d.summary || "") + '</div></details></div>', "");
}

// ---------------------------------------------------------------- render: quality (GET /quality)
function renderQuality(q){
  const say = q.say || {};
  setClass("qualityNote", "err", say.level === "bad");
  setText("qualityNote", say.note || "");
  $("qualityNote").title = q.error || "";
  setRows("qualityList", q.groups || [], g => g.model + ":" + g.voice, g => {
    const w = g.say || {};
    return '<div class="row quality" data-model="' + escapeHtml(g.model) + '">'
      + '<div class="row-head"><b class="mono">' + escapeHtml(g.model) + '</b><span class="badge">'
      + escapeHtml(w.badge || "") + '</span></div>'
      + '<div class="row-sub">' + escapeHtml(w.counts || "") + '</div>'
      + '<div class="row-sub muted">' + escapeHtml(w.rates || "") + '</div>'
      + '</div>';
  }, "");
}

// ---------------------------------------------------------------- render: history
const EVENT_CLASS = {
  sleep_failed: "bad", actor_crashed: "bad", actor_failed: "bad", draft_failed: "bad", redraft_failed: "bad",
  model_start_failed: "bad", chain_ended: "warn", brief_unmatched: "warn", brief_requested: "warn",
  sleep_done: "ok", draft_submitted: "ok", chain_closed: "ok", actor_restarted: "ok", tend_resubmitted: "ok",
  model_started: "ok",
};
function renderEvents(ev){
  const list = ev.entries || [];
  setText("eventsNote", (ev.say || {}).note || "");
  setRows("eventsList", list, e => e.seq + ":" + e.type, e => {
    const cls = EVENT_CLASS[e.type] || "";
    const w = e.say || {};
    const err = e.error || e.why;
    return '<div class="row event" data-type="' + escapeHtml(e.type) + '">'
      + '<div class="row-head"><span class="badge ' + cls + '">' + escapeHtml(String(e.type).replace(/_/g, " ")) + '</span>'
      + '<span class="muted when">' + escapeHtml(relAbs(e.at)) + '</span></div>'
      + (w.facts ? '<div class="row-sub">' + escapeHtml(lt(w.facts, e.times)) + '</div>' : "")
      + (err ? '<div class="row-sub err">' + escapeHtml(err) + '</div>' : "")
      + (w.outcome ? '<div class="row-sub muted">' + escapeHtml(w.outcome) + '</div>' : "")
      + '</div>';
  }, '<p class="muted">Nothing has happened yet.</p>');
}
function renderRuns(h){
  const list = h.entries || [];
  setRows("runsList", list, r => r.kind + ":" + r.started_at, r => {
    const isSleep = r.kind === "sleep";
    const words = r.say || "";
    const failed = r.error || (!isSleep && (r.model_failures || []).length);   // a redraft the model could not write
    const cls = failed ? "bad" : (isSleep && r.draft_id) || (!isSleep && ((r.closed || []).length || (r.resubmitted || []).length)) ? "ok" : "";
    const dur = r.duration_seconds != null ? " · took " + span(r.duration_seconds) : "";
    return '<div class="row run" data-kind="' + escapeHtml(r.kind) + '">'
      + '<div class="row-head"><span class="badge ' + cls + '">' + escapeHtml(r.kind || "run") + '</span>'
      + '<span class="muted when">' + escapeHtml(relAbs(r.finished_at || r.started_at) + dur) + '</span></div>'
      + '<div class="row-sub' + (r.error ? " err" : "") + '">' + escapeHtml(lt(words, r.times)) + '</div>'
      + '</div>';
  }, '<p class="muted">No sleep or tend has done anything yet.</p>');
}

// ---------------------------------------------------------------- the loop
async function hxRefresh(now){
  if (now){ clearTimeout(HX.timer); HX.timer = null; }
  if (HX.inflight){ HX.again = true; return; }
  HX.inflight = true;
  try {
    const wantHistory = HX.tab === "history";
    const calls = [hx("/status"), hx("/queue")];
    const quality = hx("/quality");          // the board's copy: the quality actor reads Memory, not this
    if (wantHistory) calls.push(hx("/history"), hx("/events?limit=100"));
    const [st, q, h, ev] = await Promise.all(calls);
    if (st.ok) renderStatus(st.data);
    else if (st.status !== 401){
      setClass("explainCard", "bad", true);
      setText("explainLabel", "The service is not answering");
      setText("explainText", st.detail);
    }
    if (q.ok) renderQueue(q.data);
    const qr = await quality;
    if (qr.ok) renderQuality(qr.data);
    if (h && h.ok) renderRuns(h.data);
    if (ev && ev.ok) renderEvents(ev.data);
    document.body.dataset.loaded = st.ok ? "yes" : "no";
  } finally {
    HX.inflight = false;
    if (HX.again){ HX.again = false; setTimeout(() => hxRefresh(true), 0); }
    // a hidden tab is nobody looking: it polls slowly, so the service goes back to its own pace
    else if (!HX.timer) HX.timer = setTimeout(() => { HX.timer = null; hxRefresh(); },
                                              document.hidden ? HX.hiddenEvery : HX.every);
  }
}
function hxTab(id){
  HX.tab = id;
  showTab(id);
  hxRefresh(true);
}

document.addEventListener("visibilitychange", () => { if (!document.hidden) hxRefresh(true); });
hxRefresh(true);
