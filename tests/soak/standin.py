"""The soak's stand-in llama-server: a real subprocess the service's lifecycle starts and stops.

    python -m tests.soak.standin -m MODEL --host H --port P [extra args]

Like tests/harness/fake_llama_server.py it refuses a missing -m file, answers /health 503 while it
"loads" (SOAK_STANDIN_WARMUP seconds) and 200 after. Unlike it, it follows the prompt contract
(hippocampus/sleep/prompt.py) instead of a fixed script: a draft gets a new_core per topic, or an
attach to the topic's core when one is shown (a satellite), sometimes a new_core plus an attach to it
by target_op; a redraft takes the critique's words after "say:", keeping the kind and the target.
Each answer takes SOAK_STANDIN_ANSWER seconds (the generating time).

Its timeline goes to SOAK_STANDIN_LOG (JSON lines): spawn (the process's create time), ready (the
warm-up over), answer_start, answer (t0, t1) and exit (SIGTERM or a clean end). A SIGKILL leaves no
exit line; whoever killed it writes one. Residency is computed from these lines alone.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_LOCK = threading.Lock()


def log_line(path: str, **fields) -> None:
    if not path:
        return
    with _LOCK, open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"pid": os.getpid(), **fields}) + "\n")


def _markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def _core_lines(prompt: str) -> dict:
    """c-marker -> its shown text, from the 'Existing cores:' block."""
    block = prompt.split("Existing cores:", 1)[1] if "Existing cores:" in prompt else ""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\[(c\d+)\] (.*)$", block, flags=re.M)}


def draft_answer(prompt: str) -> dict:
    topic_m = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
    topic = topic_m.group(1).strip() if topic_m else "untagged"
    frags = _markers(prompt.split("Existing cores:", 1)[0], "f")
    night = re.search(r"\bnight (\d+)\b", prompt)
    tag = f"night {night.group(1)}" if night else "lately"
    cores = _core_lines(prompt)
    mine = next((m for m, text in cores.items() if text.lower().startswith(f"{topic.lower()} is a running bit")),
                None)
    if mine:
        return {"operations": [{"kind": "attach", "content": f"Another episode of {topic}, {tag}",
                                "topic": topic, "fragments": frags, "target": mine,
                                "rationale": "more of the same running bit"}]}
    # what the first fragment says goes in, so the grounding guard finds the core's words in its fragments
    said = re.search(r"^\[f\d+\] (?:On night \d+ we )?(.+?)(?: \(moment \d+\))? \(", prompt, flags=re.M)
    words = f": {said.group(1)}" if said else ""
    ops = [{"kind": "new_core", "content": f"{topic} is a running bit, first kept {tag}{words}", "topic": topic,
            "fragments": frags[:2] if len(frags) >= 3 else frags, "target": None,
            "rationale": "the fragments agree"}]
    if len(frags) >= 3:
        ops.append({"kind": "attach", "content": f"The first episode of {topic}, {tag}", "topic": topic,
                    "fragments": frags[2:], "target": None, "target_op": 0,
                    "rationale": "an episode of the new core"})
    return {"operations": ops}


def redraft_answer(prompt: str) -> dict:
    critique = prompt.split("THE CRITIQUE:", 1)[1].strip().splitlines()[0]
    said = re.search(r"say:\s*(.+)", critique)
    if not said:
        return {"operations": []}
    kind = (re.search(r"^  kind: (\w+)", prompt, flags=re.M) or [None, "new_core"])[1]
    target = re.search(r"^  target: \[(c\d+)\]", prompt, flags=re.M)
    frags = _markers(prompt.split("Existing cores:", 1)[0], "f")
    if kind in ("attach", "supersede") and not target:
        kind = "new_core"
    return {"operations": [{"kind": kind, "content": said.group(1).strip(), "fragments": frags,
                            "target": target.group(1) if target and kind != "new_core" else None,
                            "rationale": "as the critique says"}]}


def answer_for(prompt: str) -> str:
    return json.dumps(redraft_answer(prompt) if "THE CRITIQUE:" in prompt else draft_answer(prompt))


def _create_time() -> float:
    try:
        import psutil

        return psutil.Process().create_time()
    except Exception:  # noqa: BLE001 - psutil missing: the best we can do
        return time.time()


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(prog="soak-standin")
    ap.add_argument("-m", "--model", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    args, _extra = ap.parse_known_args(argv)
    if not os.path.isfile(args.model):
        print(f"error: failed to load model '{args.model}': no such file", file=sys.stderr, flush=True)
        return 1
    log = os.environ.get("SOAK_STANDIN_LOG", "")
    warmup = float(os.environ.get("SOAK_STANDIN_WARMUP", "0.5"))
    answer_s = float(os.environ.get("SOAK_STANDIN_ANSWER", "1.0"))
    log_line(log, ev="spawn", t=_create_time())
    started = time.monotonic()
    ready = {"logged": False}

    def loaded() -> bool:
        if time.monotonic() - started < warmup:
            return False
        with _LOCK:
            first, ready["logged"] = not ready["logged"], True
        if first:
            log_line(log, ev="ready", t=time.time() - (time.monotonic() - started - warmup))
        return True

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:
            pass

        def _send(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except OSError:
                pass

        def do_GET(self) -> None:  # noqa: N802
            if self.path.split("?")[0] == "/health":
                self._send(200, {"status": "ok"}) if loaded() else \
                    self._send(503, {"error": {"code": 503, "message": "Loading model"}})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?")[0] != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            if not loaded():
                self._send(503, {"error": {"code": 503, "message": "Loading model"}})
                return
            body = json.loads(raw or b"{}")
            prompt = (body.get("messages") or [{}])[-1].get("content", "")
            t0 = time.time()
            log_line(log, ev="answer_start", t=t0)
            print("POST /v1/chat/completions", flush=True)        # request lines only: never a prompt
            time.sleep(answer_s)
            text = answer_for(prompt)
            t1 = time.time()
            log_line(log, ev="answer", t0=t0, t1=t1)
            self._send(200, {"id": "chatcmpl-soak", "object": "chat.completion", "created": int(t1),
                             "model": os.path.basename(args.model),
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": text}}],
                             "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True

    def on_term(signum, frame) -> None:
        log_line(log, ev="exit", t=time.time(), how="sigterm")
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    print(f"soak stand-in listening on {args.host}:{args.port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    log_line(log, ev="exit", t=time.time(), how="end")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
