"""The deploy pages' own commands, as written (issue 32, item 1).

The systemd and Jetson pages run here, step by step, in bash from a copy of the checkout (what a clone
holds: the tracked and new files), each in one fresh venv with a throwaway HOME; the systemd unit's
ExecStart then serves from that venv. What needs root (`sudo tee`, `systemctl`) or a Jetson (`ls
~/llama.cpp/...`) is left out and said so at the step. The Windows pages cannot run on Linux: their
commands are parsed and their arguments checked against the program's own parser and the wheel's
metadata. The earlier release on the package index is never installed: its version number only (from
`pip index versions seren-hippocampus`) is compared with ours.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path, PureWindowsPath

import pytest
import requests
from packaging.version import Version

from tests.harness.memory_server import free_port
from tests.harness.reviewer import wait_for

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
SYSTEMD, JETSON, WINDOWS, CARD_4GB = (DEPLOY / "systemd" / "README.md", DEPLOY / "jetson" / "README.md",
                                      DEPLOY / "windows" / "README.md", DEPLOY / "windows" / "4gb-card.md")
PAGES = (SYSTEMD, JETSON, WINDOWS, CARD_4GB)
EARLIER = "5.4.0"       # the other program's latest release under our name on the index (pip index versions)
PIP_CACHE = os.path.expanduser("~/.cache/pip")     # the real one: fresh venvs reuse what was downloaded before


def _version() -> str:
    """The version as the source says it (pyproject.toml reads it from hippocampus/__init__.py)."""
    text = (ROOT / "hippocampus" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.M).group(1)


def _blocks(page: Path, lang: str, after: str = "") -> list:
    text = page.read_text(encoding="utf-8")
    if after:
        text = text.split(after, 1)[1]
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


# ---------------------------------------------------------------- the clone, the wheel, the shell

@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> Path:
    """What a clone of this checkout holds: every tracked file and every new one git does not ignore."""
    where = tmp_path_factory.mktemp("clone") / "SerenHippocampus"
    names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if src.is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, where / name)
    return where


def _shell_env(home: Path) -> dict:
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and not p.startswith(str(Path(sys.executable).parent)))
    env = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "SSL_", "REQUESTS_CA", "LANG", "LC_"))}
    env.update(HOME=str(home), PATH=path, PIP_CACHE_DIR=PIP_CACHE, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def _bash(script: str, cwd: Path, home: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=str(cwd), env=_shell_env(home),
                         capture_output=True, text=True, timeout=timeout)
    return res


def _ok(res: subprocess.CompletedProcess, what: str) -> subprocess.CompletedProcess:
    assert res.returncode == 0, f"{what}: exit {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


@pytest.fixture(scope="session")
def wheel(clone, tmp_path_factory) -> Path:
    """The Jetson page's `pip wheel` line, run once per session in the clone; the wheel the page names."""
    block = next(b for b in _blocks(JETSON, "bash") if "pip wheel" in b)
    build = next(line for line in block.splitlines() if "pip wheel" in line)
    _ok(_bash(build, clone, tmp_path_factory.mktemp("wheel-home")), build)
    named = re.search(r"dist/(seren_hippocampus-\S+\.whl)", build).group(1)
    built = sorted(p.name for p in (clone / "dist").glob("*.whl"))
    assert built == [named], f"the page names {named}; the build made {built}"
    return clone / "dist" / named


class Background:
    """A bash script started now and waited for later, its output in files (a pipe nobody reads could fill)."""

    def __init__(self, script: str, cwd: Path, home: Path, logs: Path):
        self.out, self.err = logs / "stdout", logs / "stderr"
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=str(cwd),
                                         env=_shell_env(home), stdout=out, stderr=err, start_new_session=True)

    def result(self, timeout: float = 600) -> subprocess.CompletedProcess:
        rc = self.proc.wait(timeout)
        return subprocess.CompletedProcess(self.proc.args, rc, self.out.read_text(encoding="utf-8", errors="replace"),
                                           self.err.read_text(encoding="utf-8", errors="replace"))

    def end(self) -> None:
        if self.proc.poll() is None:                  # its test never ran: the whole group goes
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)


@pytest.fixture(scope="session")
def jetson_install(clone, wheel, tmp_path_factory):
    """The Jetson page's install block up to its token step, by the wheel route, started in the background: a fresh
    venv, the wheel with [mcp] and its dependencies from the index, the --version line, the profile copied. Both
    pages' installs mostly wait on the index, so the systemd test asks for this at its start and the two overlap
    (about a minute each) instead of running one after the other. Gives (the folder the block runs from, HOME, the
    rest of the block, the started first part)."""
    where = tmp_path_factory.mktemp("jetson")
    home = where / "home"
    home.mkdir()
    block = _blocks(JETSON, "bash", after="## Install")[0]
    lines = block.splitlines()
    box_check = [i for i, line in enumerate(lines) if line.startswith("ls ~/llama.cpp")]
    assert len(box_check) == 1                                   # the Nano's own check: nothing to list here
    checkout_install = next(i for i, line in enumerate(lines) if 'pip install ".[mcp]"' in line)
    wheel_install = next(line for line in _blocks(JETSON, "bash") if "pip wheel" in line).splitlines()[1]
    # the page's other route for the install line (the first route is the systemd page's, run above);
    # the wheel lies beside the copied profile, so the commands run from a folder holding both
    lines[checkout_install] = wheel_install
    del lines[box_check[0]]
    here = where / "copied"
    (here / "deploy" / "jetson").mkdir(parents=True)
    shutil.copy2(wheel, here / wheel.name)
    shutil.copy2(clone / "deploy" / "jetson" / "seren-hippocampus.jetson.yaml", here / "deploy" / "jetson")
    split = next(i for i, line in enumerate(lines) if line.startswith("umask"))
    first, rest = "\n".join(lines[:split]) + "\n", "\n".join(lines[split:]) + "\n"
    started = Background(first, here, home, where)
    yield here, home, rest, started
    started.end()


def _metadata(whl: Path):
    with zipfile.ZipFile(whl) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(z.read(name).decode("utf-8"))


def _edit_yaml(path: Path, **sets) -> None:
    """The page's "edit it" step, done the way a person would: the keys it names, the rest left as is."""
    from ruamel.yaml import YAML

    yaml = YAML()
    data = yaml.load(path.read_text(encoding="utf-8"))
    for dotted, value in sets.items():
        node = data
        *head, last = dotted.split("__")
        for key in head:
            node = node[key]
        node[last] = value
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(data, fh)


# ---------------------------------------------------------------- the version and every page's install line

def test_the_version_sorts_after_the_release_it_replaces_and_the_wheel_and_version_flag_say_it(wheel):
    ours = _version()
    assert Version(ours) > Version(EARLIER), f"{ours} must sort after {EARLIER}, the other program on the index"
    meta = _metadata(wheel)
    assert meta["Name"] == "seren-hippocampus" and meta["Version"] == ours
    extras = set(meta.get_all("Provides-Extra") or [])
    for page in PAGES:
        for named in re.findall(r'\.\[([a-z,]+)\]', page.read_text(encoding="utf-8")):
            assert set(named.split(",")) <= extras, f"{page.name} names [{named}]; the wheel has {sorted(extras)}"
        for file in re.findall(r"seren_hippocampus-([^-\s]+)-py3", page.read_text(encoding="utf-8")):
            assert file == ours, f"{page.name} names the wheel of {file}; this checkout builds {ours}"
    res = subprocess.run([sys.executable, "-m", "hippocampus", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == f"seren-hippocampus {ours}", (
        res.stdout + res.stderr + "\n(a stale install: run `pip install -e .` in this venv again)")


def test_every_install_line_on_the_pages_installs_this_checkout_never_the_index_s_package():
    lines = [(page.name, line.strip()) for page in PAGES for lang in ("bash", "powershell")
             for block in _blocks(page, lang) for line in block.splitlines()
             if re.search(r"\bpip(\.exe)?\"? install\b", line)]
    assert len(lines) >= 5, lines                     # systemd, Jetson (two routes), NSSM, pywin32
    for name, line in lines:
        target = shlex.split(line.split(" install ", 1)[1].split("#", 1)[0], posix=True)[0]
        assert target.startswith("."), f"{name}: `{line}` installs {target!r} from the package index"
    for page in PAGES:
        assert '"seren-hippocampus[' not in page.read_text(encoding="utf-8"), page.name


# ---------------------------------------------------------------- systemd: the steps, then the unit's ExecStart

def _steps(block: str) -> dict:
    """`# 1. ...` to the next `# N.`: the page's numbered steps, each a runnable chunk of bash."""
    steps, current = {}, None
    for line in block.splitlines():
        m = re.match(r"# (\d+)\. ", line)
        if m:
            current = int(m.group(1))
            steps[current] = []
        if current is not None:
            steps[current].append(line)
    return {n: "\n".join(lines) + "\n" for n, lines in steps.items()}


def _unit(text: str) -> dict:
    keys: dict = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            k, _, v = line.partition("=")
            keys.setdefault(k, []).append(v)
    return keys


def _env_file(path: Path) -> dict:
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines()
                if "=" in line and not line.startswith("#"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_systemd_page_as_written_then_the_unit_s_exec_start_serves_from_that_venv(clone, memory, tmp_path,
                                                                                      jetson_install):
    # jetson_install is not read here: asking for it starts the Jetson page's install beside this test's own
    user = "you"
    home = tmp_path / "home" / user           # the unit's /home/<user> is this throwaway home
    home.mkdir(parents=True)
    steps = _steps(_blocks(SYSTEMD, "bash", after="## Install")[0])
    assert sorted(steps) == [1, 2, 3, 4, 5, 6]
    ours = _version()

    # 1. the venv and this package from the checkout (the clone is the working folder of every step)
    out = _ok(_bash(steps[1], clone, home), "step 1").stdout
    assert out.strip().splitlines()[-1] == f"seren-hippocampus {ours}", out[-2000:]
    python = home / "seren-venvs" / "hippocampus" / "bin" / "python"
    extras = subprocess.run([str(python), "-c", "import mcp, a2wsgi, hippocampus; print(hippocampus.__file__)"],
                            capture_output=True, text=True, timeout=60, cwd=str(home), env=_shell_env(home))
    assert extras.returncode == 0 and str(home) in extras.stdout, extras.stderr   # [mcp], and not the checkout

    # 2. the config, then its "edit it" line: memory.url, model.url, and the bearer's variable
    _ok(_bash(steps[2], clone, home), "step 2")
    cfg = home / "seren-hippocampus" / "seren-hippocampus.yaml"
    port = free_port()
    _edit_yaml(cfg, memory__url=memory.url, model__url="", server__port=port,
               server__bearer_token_env="SEREN_HIPPOCAMPUS_TOKEN",
               sleep__state_path=str(home / ".seren-hippocampus" / "state.json"))

    # 3. the token file, yours alone
    _ok(_bash(steps[3], clone, home), "step 3")
    env_file = home / "seren-hippocampus" / "seren-hippocampus.env"
    assert env_file.stat().st_mode & 0o077 == 0
    token = _env_file(env_file)["SEREN_HIPPOCAMPUS_TOKEN"]
    assert len(token) >= 32

    # 4. check-config with the values the service will see: this command exists and finds nothing wrong
    res = _ok(_bash(steps[4], clone, home), "step 4")
    assert "no warnings" in res.stdout and f'"port": {port}' in res.stdout, res.stdout[-2000:]
    assert '"bearer_token_env": "SEREN_HIPPOCAMPUS_TOKEN"' in res.stdout

    # 5. the unit with your user name put in: the sed as written; `sudo tee` and systemctl need root,
    #    so the unit goes to a file here and its ExecStart is run the way systemd would run it
    sed = steps[5].split("\n")[1].split(" \\")[0].replace("$(id -un)", user)
    unit_text = _ok(_bash(sed, clone, home), "step 5's sed").stdout
    assert "__TARGET_USER__" not in unit_text and "__TARGET_HOME__" not in unit_text
    unit = _unit(unit_text)         # the paths are $HOME's as the sed wrote them, not /home/<user>
    exec_start = shlex.split(unit["ExecStart"][0])
    assert exec_start[0] == str(python), "the unit runs the venv step 1 made"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "USER": user}
    env.update(dict(v.split("=", 1) for v in unit["Environment"]))
    env.update(_env_file(Path(unit["EnvironmentFile"][0].lstrip("-"))))
    proc = subprocess.Popen(exec_start, cwd=unit["WorkingDirectory"][0], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        base = f"http://127.0.0.1:{port}"

        def up():
            try:
                return requests.get(base + "/health", timeout=2).status_code == 200
            except requests.RequestException:
                assert proc.poll() is None, proc.stdout.read()
                return False
        wait_for(up, timeout=60, what="the unit's ExecStart to answer /health")
        # 6. is it up? (the page's curl, on this test's port; journalctl needs the unit installed)
        curl = steps[6].split("\n")[1].replace(":7424", f":{port}")
        health = json.loads(_ok(_bash(curl, clone, home), "step 6").stdout)
        assert health["ok"] is True
        assert requests.get(base + "/status", timeout=10).status_code == 401       # the bearer is in force
        who = requests.get(base + "/", headers={"Authorization": f"Bearer {token}"}, timeout=10).json()
        assert who.get("version") == ours, who
    finally:
        proc.send_signal(signal.SIGTERM)            # systemd's stop (KillSignal=SIGTERM)
        rc = proc.wait(timeout=float(unit["TimeoutStopSec"][0]))
    log = proc.stdout.read()
    assert rc == 0, log[-3000:]
    assert f"seren-hippocampus {ours} listening on" in log, log[-3000:]


# ---------------------------------------------------------------- Jetson: the install block, by the wheel route

@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_jetson_page_as_written_installing_the_wheel_it_says_how_to_build(jetson_install, memory):
    here, home, rest, started = jetson_install
    out = _ok(started.result(), "the venv, the wheel, the profile").stdout
    assert f"seren-hippocampus {_version()}" in out, out[-2000:]
    cfg = home / "seren-hippocampus" / "seren-hippocampus.yaml"
    model = home / "models" / "small.gguf"                      # "edit model.lifecycle.model_path ... and memory.url"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    _edit_yaml(cfg, memory__url=memory.url, model__lifecycle__model_path=str(model))
    res = _bash(rest, here, home)
    assert "unrecognized arguments" not in res.stderr and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert res.returncode in (0, 1), res.stderr[-3000:]          # 1: what is missing on this box, each named
    data = json.loads(res.stdout.split("\n# config file:")[0])
    assert data["memory"]["url"] == memory.url and data["model"]["lifecycle"]["handover"] is True
    assert data["server"]["bearer_token_env"] == "SEREN_HIPPOCAMPUS_TOKEN"
    for warning in re.findall(r"^warning: (.*)$", res.stdout, re.M):
        assert "'server.bearer_token_env'" not in warning, warning    # the token came from the env file

    # the flags block: `python -m hippocampus check-config ...` in that venv
    flags = next(b for b in _blocks(JETSON, "bash") if "--model-handover" in b and "check-config" in b)
    flags = flags.replace("python -m hippocampus", "~/seren-venvs/hippocampus/bin/python -m hippocampus", 1)
    res = _bash(flags, here, home)
    assert res.returncode in (0, 1) and "error:" not in res.stderr, res.stderr[-3000:]
    data = json.loads(res.stdout.split("\n# config file:")[0])
    assert data["model"]["lifecycle"]["model_path"] == "/mnt/nvme/models/other.gguf"
    assert data["sleep"]["tend_cycle"] is False and data["model"]["max_tokens"] == 1024


# ---------------------------------------------------------------- Windows: the commands' arguments

def _ps_lines(block: str, values: dict) -> list:
    """PowerShell lines, comments dropped, backtick continuations joined, $variables put in."""
    text = re.sub(r"`\n\s*", " ", block)
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        if not line or line.startswith("#") or re.match(r"\$\w+\s*=", line):
            continue
        for name, value in values.items():
            line = line.replace(f"${name}", value)
        out.append(line)
    return out


def _ps_split(line: str) -> list:
    return shlex.split(line.replace("\\", "\\\\").replace('`"', '\\"'), posix=True)


def _assigned(block: str) -> dict:
    return dict(re.findall(r'^\$(\w+)\s*=\s*"([^"]+)"', block, re.M))


def _parses(argv: list) -> object:
    from hippocampus.__main__ import build_parser

    return build_parser().parse_args(argv)


NSSM_PARAMETERS = {                          # nssm.cc's settings table: the ones `nssm set` takes
    "Application", "AppParameters", "AppDirectory", "AppExit", "AppAffinity", "AppEnvironment",
    "AppEnvironmentExtra", "AppNoConsole", "AppPriority", "AppRestartDelay", "AppStdin", "AppStdout",
    "AppStderr", "AppStdoutCreationDisposition", "AppStderrCreationDisposition", "AppRotateFiles",
    "AppRotateOnline", "AppRotateSeconds", "AppRotateBytes", "AppRotateBytesHigh", "AppRotateDelay",
    "AppStopMethodSkip", "AppStopMethodConsole", "AppStopMethodWindow", "AppStopMethodThreads",
    "AppThrottle", "AppTimestampLog", "DependOnGroup", "DependOnService", "Description", "DisplayName",
    "ImagePath", "ObjectName", "Name", "Start", "Type", "AppEvents", "AppKillProcessTree", "AppRedirectHook",
}


def test_the_nssm_steps_create_the_venv_install_the_checkout_and_pass_arguments_the_program_takes():
    block = _blocks(WINDOWS, "powershell", after="## 1. NSSM")[0]
    values = _assigned(block)
    assert {"venv", "app", "logs"} <= set(values)
    for value in values.values():
        assert PureWindowsPath(value).is_absolute(), value          # a service starts in System32
    lines = _ps_lines(block, values)
    venv, app = values["venv"], values["app"]
    python = f"{venv}\\Scripts\\python.exe"
    cfg = f"{app}\\seren-hippocampus.yaml"
    order = [line.split()[0] + " " + line.split()[1] for line in lines]
    assert lines[0] == f"py -3 -m venv {venv}", lines[0]               # the venv first, then the install into it
    install = _ps_split(lines[1])
    assert install[:2] == ["&", python] and install[2:5] == ["-m", "pip", "install"] and install[5] == ".[mcp]"
    assert _ps_split(lines[2])[1:] == [python, "-m", "seren_hippocampus", "--version"]
    copy = _ps_split(next(line for line in lines if line.startswith("Copy-Item")))
    sample = ROOT / PureWindowsPath(copy[1]).as_posix()
    assert sample.is_file(), f"the page copies {copy[1]}, which the checkout does not hold"
    assert copy[2] == cfg
    check = _ps_split(next(line for line in lines if "check-config" in line))
    assert check[1] == python and check[2:4] == ["-m", "seren_hippocampus"]
    args = _parses(check[4:])
    assert args.command == "check-config" and args.config == cfg
    assert order.index("nssm install") > order.index("Copy-Item deploy\\seren-hippocampus.yaml.sample")

    nssm_install = _ps_split(next(line for line in lines if line.startswith("nssm install")))
    assert nssm_install[2] == "SerenHippocampus" and nssm_install[3] == python
    assert nssm_install[4:6] == ["-m", "seren_hippocampus"]
    args = _parses(nssm_install[6:])
    assert args.command is None and args.config == cfg                 # the bare command serves
    for line in lines:
        if line.startswith("nssm set"):
            parts = _ps_split(line)
            assert parts[2] == "SerenHippocampus" and parts[3] in NSSM_PARAMETERS, line
    exits = [_ps_split(line)[4:] for line in lines if line.startswith("nssm set SerenHippocampus AppExit")]
    assert ["78", "Exit"] in exits and ["Default", "Restart"] in exits
    unit = (DEPLOY / "systemd" / "seren-hippocampus.service").read_text(encoding="utf-8")
    assert "RestartPreventExitStatus=78" in unit                       # the same refusal on both
    stop = next(_ps_split(line)[4] for line in lines if "AppStopMethodConsole" in line)
    assert int(stop) >= 15000

    spaced = re.search(r"``(nssm set SerenHippocampus AppParameters .*?)``", WINDOWS.read_text(encoding="utf-8"))
    parameters = _ps_split(_ps_lines(spaced.group(1), values)[0])[4]
    argv = _ps_split(parameters)
    assert argv[:2] == ["-m", "seren_hippocampus"] and _parses(argv[2:]).config == cfg


def test_every_nssm_environment_command_on_the_page_keeps_the_variables_the_service_needs():
    """One `nssm set ... AppEnvironmentExtra` replaces the whole list: each one the page gives sets the block's
    variables with its own, or adds with the `+` form; the bearer's variable is given that way."""
    page = WINDOWS.read_text(encoding="utf-8")
    block = _blocks(WINDOWS, "powershell", after="## 1. NSSM")[0]
    needed = next(_ps_split(line)[4:] for line in block.splitlines() if " AppEnvironmentExtra " in line)
    assert {"PYTHONUTF8=1", "SEREN_SUPERVISED=1"} <= set(needed)
    said = re.finditer(r"^nssm set SerenHippocampus AppEnvironmentExtra .*$|"
                       r"`(nssm set SerenHippocampus AppEnvironmentExtra [^`]*)`", page, re.M)
    commands = [_ps_split(m.group(1) or m.group(0))[4:] for m in said]
    assert len(commands) >= 2, commands
    for pairs in commands:
        assert set(needed) <= set(pairs) or all(p.startswith("+") for p in pairs), pairs
    assert any(p.lstrip("+").startswith("SEREN_HIPPOCAMPUS_TOKEN=") for pairs in commands for p in pairs), commands


def test_the_pywin32_steps_install_the_windows_extra_from_the_checkout_and_the_service_command_takes_them():
    page = WINDOWS.read_text(encoding="utf-8")
    values = _assigned(_blocks(WINDOWS, "powershell", after="## 1. NSSM")[0])
    block = _blocks(WINDOWS, "powershell", after="## 2. The pywin32 service")[0]
    lines = _ps_lines(block, values)
    python = f"{values['venv']}\\Scripts\\python.exe"
    install = _ps_split(lines[0])
    assert install[1:5] == [python, "-m", "pip", "install"] and install[5] == ".[windows,mcp]"
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^windows = \[.*pywin32.*sys_platform == .win32.', toml, re.M)
    for line in lines:
        if "seren-hippocampus.exe" in line:
            parts = _ps_split(line)
            assert parts[1] == f"{values['venv']}\\Scripts\\seren-hippocampus.exe"   # the [project.scripts] name
            args = _parses(parts[2:])
            assert args.command == "service" and args.action in ("install", "start")
            if args.action == "install":
                assert PureWindowsPath(args.config).is_absolute()
    assert "seren-hippocampus = \"hippocampus.__main__:main\"" in toml
    assert "py -3 -m venv" in page


def test_the_4gb_card_s_check_config_takes_its_flags():
    block = _blocks(CARD_4GB, "powershell")[0]
    values = {"venv": "C:\\Users\\you\\seren-venvs\\hippocampus", "app": "C:\\Users\\you\\seren-hippocampus"}
    line = _ps_lines(block, values)[0]
    parts = _ps_split(line)
    assert parts[1] == f"{values['venv']}\\Scripts\\python.exe" and parts[2:4] == ["-m", "hippocampus"]
    args = _parses(parts[4:])
    assert args.command == "check-config" and args.model_handover is True
