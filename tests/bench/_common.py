"""Shared pieces of the benchmarks: the service and Memory as real subprocesses, /proc readings,
a webhook receiver, a recording proxy, a scripted model and the figures table."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from hippocampus.demo.waiting import wait_for as _wait_for  # noqa: E402,F401 - benches import them from here
from tests.harness.ports import free_port  # noqa: E402,F401
PY = sys.executable
HERE = Path(__file__).resolve().parent
CLK = os.sysconf("SC_CLK_TCK")

os.environ.setdefault("SEREN_MEMORY_UPDATES_ENABLED", "0")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


# ---------------------------------------------------------------- /proc

def cpu_seconds(pid: int) -> float:
    """utime + stime of one process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def wait_for(pred: Callable[[], object], timeout: float = 30.0, interval: float = 0.01, what: str = "condition"):
    """The package's poll (hippocampus.demo.waiting), with the benches' longer default deadline."""
    return _wait_for(pred, timeout=timeout, interval=interval, what=what)


# ---------------------------------------------------------------- stats and the table

def median(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def pct(xs, p: float) -> float:
    """Nearest-rank percentile."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def runs_arg(default: int) -> int:
    for i, a in enumerate(sys.argv):
        if a == "--runs" and i + 1 < len(sys.argv):
            return int(sys.argv[i + 1])
        if a.startswith("--runs="):
            return int(a.split("=", 1)[1])
    return default


def table(title: str, rows: list) -> None:
    """rows: (figure, measured text, target text, ok: True/False/None)."""
    print()
    print(f"== {title}")
    print(f"   ({machine_line()})")
    w1 = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    w3 = max(len(r[2]) for r in rows)
    for fig, got, target, ok in rows:
        mark = "" if ok is None else ("PASS" if ok else "MISS")
        print(f"  {fig:<{w1}}  {got:>{w2}}   target {target:<{w3}}  {mark}")
    sys.stdout.flush()


# ---------------------------------------------------------------- Memory in its own process

class MemoryProc:
    """tests/bench/memory_helper.py: the real SerenMemory (deterministic embedder) in a child process."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.proc: Optional[subprocess.Popen] = None
        self.url = ""
        self.pid = 0
        self._n = 0

    def start(self) -> "MemoryProc":
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._err = open(self.workdir / "memory.log", "ab")
        self.proc = subprocess.Popen([PY, str(HERE / "memory_helper.py"), str(self.workdir / "memory-boot")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
                                     cwd=str(ROOT))
        line = self.proc.stdout.readline()
        while line and not line.startswith("READY"):      # Memory's own start-up lines
            line = self.proc.stdout.readline()
        if not line.startswith("READY"):
            raise RuntimeError(f"the Memory helper did not start: {line!r}")
        _, self.url, pid = line.split()
        self.pid = int(pid)
        return self

    def cmd(self, line: str) -> dict:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        while out and not out.startswith(("OK", "ERR")):  # Memory's own lines
            out = self.proc.stdout.readline()
        if not out.startswith("OK"):
            raise RuntimeError(f"Memory helper: {line!r} -> {out!r}")
        return json.loads(out[3:])

    def fresh(self) -> None:
        self._n += 1
        self.cmd(f"fresh {self.workdir / f'store-{self._n}'}")

    def seed(self, n: int, topics: int) -> dict:
        return self.cmd(f"seed {n} {topics}")

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                self.cmd("quit")
                self.proc.wait(10)
            except Exception:  # noqa: BLE001
                self.proc.kill()
                self.proc.wait(10)


# ---------------------------------------------------------------- the service in its own process

def service_env(extra: Optional[dict] = None) -> dict:
    """The service's environment: bytecode cached (as an installed package has it), but in /tmp, never
    beside the sources; no SEREN_HIPPOCAMPUS_* overrides leaking in from the shell."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SEREN_HIPPOCAMPUS_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    env.update(extra or {})
    return env


PYCACHE = "/tmp/hippo-bench-pycache"


class ServiceProc:
    """`python -m hippocampus --config <file>` with a config written here (JSON is YAML)."""

    def __init__(self, workdir: Path, memory_url: str, **blocks: dict):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        cfg = {"server": {"port": self.port}, "memory": {"url": memory_url}, "model": {"url": ""},
               "sleep": {"mode": "external", "state_path": str(self.workdir / "state" / "state.json")}}
        for block, values in blocks.items():
            cfg[block] = {**cfg.get(block, {}), **values}
        self.cfg_path = self.workdir / "config.yaml"
        self.cfg_path.write_text(json.dumps(cfg, indent=1))
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen] = None
        self.startup_seconds = float("nan")
        self.log_path = self.workdir / "service.log"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, timeout: float = 60.0, env: Optional[dict] = None, mcp: bool = True,
              launcher: Optional[list] = None) -> "ServiceProc":
        """launcher: argv to run instead of `-m hippocampus` (a profiling wrapper), given the same flags."""
        t0 = time.monotonic()
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([PY, *(launcher or ["-m", "hippocampus"]), "--config", str(self.cfg_path),
                                      "--log-level", "WARNING"], stdout=self._log, stderr=subprocess.STDOUT,
                                     cwd=str(ROOT), env=service_env(env))
        s = requests.Session()
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the service exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if s.get(self.url + "/health", timeout=2).status_code == 200:
                    self.startup_seconds = time.monotonic() - t0
                    if mcp:
                        self.wait_mcp()
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.002)
        raise RuntimeError(f"the service did not answer /health within {timeout} s; see {self.log_path}")

    def wait_mcp(self, timeout: float = 120.0) -> float:
        """Call /mcp once (the first call mounts it) and wait for the answer; seconds waited."""
        t0 = time.monotonic()
        requests.post(self.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                      headers={"Accept": "application/json, text/event-stream"}, timeout=timeout)
        return time.monotonic() - t0

    def mcp_tool_call(self, name: str = "sleep_status", timeout: float = 120.0) -> dict:
        """One MCP tool call over JSON-RPC, as a client makes it (initialize, then tools/call)."""
        h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}}}
        requests.post(self.url + "/mcp", json=init, headers=h, timeout=timeout).raise_for_status()
        r = requests.post(self.url + "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                   "params": {"name": name, "arguments": {}}},
                          headers={**h, "MCP-Protocol-Version": "2025-06-18"}, timeout=timeout)
        r.raise_for_status()
        return r.json()["result"]

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def rss(self) -> float:
        return rss_mb(self.pid)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if getattr(self, "_log", None):
            self._log.close()


class OldService(ServiceProc):
    """seren-hippocampus 5.4.0 from its own venv, run as a process (`seren-hippocampus --config`), its code
    never read; the same config file as ours (the keys it does not know it ignores)."""

    def __init__(self, workdir: Path, memory_url: str, venv: Path, **blocks):
        super().__init__(workdir, memory_url, **blocks)
        self.venv = Path(venv)

    def start(self, timeout: float = 120.0, **_kw) -> "OldService":
        t0 = time.monotonic()
        self._log = open(self.log_path, "ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEREN_HIPPOCAMPUS_")}
        env["SEREN_HIPPOCAMPUS_UPDATES_ENABLED"] = "0"
        self.proc = subprocess.Popen([str(self.venv / "bin" / "seren-hippocampus"), "--config", str(self.cfg_path)],
                                     stdout=self._log, stderr=subprocess.STDOUT, cwd=str(self.workdir), env=env)
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"5.4.0 exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if requests.get(self.url + "/health", timeout=2).status_code == 200:
                    self.startup_seconds = time.monotonic() - t0
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"5.4.0 did not answer /health within {timeout} s; see {self.log_path}")


def old_venv(default: str = "/tmp/seren-hippocampus-5.4.0") -> Optional[Path]:
    """--old PATH, else $SEREN_OLD_HIPPOCAMPUS_VENV, else the default; None with --no-old."""
    if "--no-old" in sys.argv:
        return None
    for i, a in enumerate(sys.argv):
        if a == "--old" and i + 1 < len(sys.argv):
            return Path(sys.argv[i + 1])
        if a.startswith("--old="):
            return Path(a.split("=", 1)[1])
    return Path(os.environ.get("SEREN_OLD_HIPPOCAMPUS_VENV", default))


def old_missing(venv: Optional[Path]) -> Optional[str]:
    """Why 5.4.0 cannot run from `venv` (and how to make it), or None."""
    if venv is None:
        return "--no-old"
    if (venv / "bin" / "seren-hippocampus").exists():
        return None
    return (f"5.4.0 not found at {venv}: make it with `python -m venv {venv} && {venv}/bin/pip download "
            f"--no-deps -d {venv}/dl seren-hippocampus==5.4.0 && {venv}/bin/pip install {venv}/dl/*`")


# ---------------------------------------------------------------- a webhook receiver (push, no polling)

class Receiver:
    """Collects the service's webhook events with the time each arrived."""

    def __init__(self):
        self.events: list = []
        self.cond = threading.Condition()
        rec = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                t = time.monotonic()
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with rec.cond:
                    rec.events.append((t, body))
                    rec.cond.notify_all()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def wait(self, type_: str, count: int = 1, timeout: float = 60.0) -> tuple:
        """The (time, event) of the count-th event of this type (`type`, or 5.4.0's `event`)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hits = [e for e in self.events if e[1].get("type", e[1].get("event")) == type_]
                if len(hits) >= count:
                    return hits[count - 1]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {type_} event #{count} within {timeout} s "
                                         f"(got {[e[1].get('type') for e in self.events]})")
                self.cond.wait(left)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------- a recording TCP proxy in front of Memory

class Proxy:
    """Forwards to Memory and records the time of every chunk the service sends."""

    def __init__(self, upstream_url: str):
        m = re.match(r"https?://([^:/]+):(\d+)", upstream_url)
        self.up = (m.group(1), int(m.group(2)))
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.sent: list = []           # (monotonic time, first bytes of the chunk)
        self.lock = threading.Lock()
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            u = socket.create_connection(self.up)
            for s in (c, u):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(c, u, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, False), daemon=True).start()

    def _pump(self, src, dst, record: bool):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if record:
                    t = time.monotonic()
                    with self.lock:
                        self.sent.append((t, data[:80]))
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def first_after(self, t0: float) -> Optional[tuple]:
        with self.lock:
            return next((e for e in self.sent if e[0] >= t0), None)

    def stop(self):
        self._stop = True
        self.sock.close()


# ---------------------------------------------------------------- a small model that follows the prompt contract

def markers(prompt: str, prefix: str) -> list:
    return re.findall(r"^\[(" + prefix + r"\d+)\]", prompt, flags=re.M)


def scripted_reply(prompt: str) -> str:
    """One new_core per pile citing every fragment shown; a redraft takes the critique's words after 'say:'."""
    frags = markers(prompt, "f")
    if "THE CRITIQUE" in prompt:
        m = re.search(r"say:\s*(.+)", prompt.split("THE CRITIQUE", 1)[1])
        content = m.group(1).strip() if m else "A corrected statement"
        return json.dumps({"operations": [{"kind": "new_core", "content": content, "fragments": frags[:1],
                                           "target": None, "rationale": "as the critique says"}]})
    m = re.search(r"^Topic: (.+)$", prompt, flags=re.M)
    topic = m.group(1) if m else "things"
    return json.dumps({"operations": [{"kind": "new_core", "content": f"Something true about {topic}",
                                       "fragments": frags, "target": None, "rationale": "the fragments agree"}]})


def scripted_responder(delay: float = 0.0):
    def respond(body: dict) -> dict:
        reply = {"content": scripted_reply(body["messages"][-1]["content"])}
        if delay:
            reply["delay"] = delay
        return reply
    return respond


THREE_TOPICS = {"tea": "we drank green tea in the afternoon", "garden": "the rose garden bloomed early",
                "river": "we walked along the river at dusk"}


def seed_three_clusters(hand, per_topic: int = 3) -> str:
    for topic, text in THREE_TOPICS.items():
        for i in range(per_topic):
            hand.short(f"{text}, day {i}", topic=topic)
    return hand.brief("tea, the garden and the river mattered this week", promote=["tea", "garden", "river"])


def tmpdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"hippo-bench-{prefix}-"))


# ---------------------------------------------------------------- an HTTP load generator (keep-alive, asyncio)

def load(url: str, path: str, clients: int, seconds: float, per_client_rate: float = 0.0,
         headers: Optional[dict] = None) -> dict:
    """`clients` keep-alive connections sending GET `path` for `seconds`: back to back (closed loop), or
    each at `per_client_rate` requests/s. Returns latencies (s), count, requests/s and errors."""
    import asyncio

    m = re.match(r"https?://([^:/]+):(\d+)", url)
    host, port = m.group(1), int(m.group(2))
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    raw = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{extra}\r\n".encode()
    lat: list = []
    errors: list = []

    async def client(i: int, t_end: float) -> None:
        reader, writer = await asyncio.open_connection(host, port)
        gap = 1.0 / per_client_rate if per_client_rate else 0.0
        nxt = time.monotonic() + (gap * i / clients if gap else 0.0)
        try:
            while True:
                if gap:
                    now = time.monotonic()
                    if nxt > now:
                        await asyncio.sleep(nxt - now)
                    nxt += gap
                if time.monotonic() >= t_end:
                    break
                t = time.perf_counter()
                writer.write(raw)
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head.split(b" ", 2)[1])
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":", 1)[1])
                await reader.readexactly(n)
                lat.append(time.perf_counter() - t)
                if status != 200:
                    errors.append(status)
        finally:
            writer.close()

    async def run() -> float:
        t0 = time.monotonic()
        t_end = t0 + seconds
        await asyncio.gather(*(client(i, t_end) for i in range(clients)))
        return time.monotonic() - t0

    took = asyncio.run(run())
    return {"lat": lat, "count": len(lat), "rps": len(lat) / took, "errors": errors, "seconds": took}


# ---------------------------------------------------------------- how fast and how busy this machine is right now

def machine_line() -> str:
    """A reference pure-Python loop's CPU time (best of 5) and the load average: these boxes are shared, and
    every figure here scales with them; compare runs by it (lower is a faster machine)."""
    best = float("inf")
    for _ in range(5):
        t = time.thread_time()
        sum(i * i for i in range(200000))
        best = min(best, time.thread_time() - t)
    load = os.getloadavg()
    return (f"machine now: reference loop {best * 1000:.1f} ms CPU, load average {load[0]:.1f} "
            f"on {os.cpu_count()} CPUs")


def banner(title: str) -> None:
    print(f"{title}\n{machine_line()}", flush=True)
