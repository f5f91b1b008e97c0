"""scorelake as a user installs it, run by ``.ci/run`` before the suite: the wheel built from the
checkout, installed with its declared dependencies only (no extras, no ``-e``) into a fresh venv,
and used from an empty folder outside the checkout. Every module of the installed package imports;
the README's shell blocks that run on the sample corpus run as written (the re-judging one against
the suite's scripted judge), and its Python blocks, from an empty folder: the sample is the one
inside the package (``scorelake demo``, ``scorelake.sample_runs()``); each command once on it, with
the exit code it must have; the cluster path says it needs the ``[dask]`` extra, and export otlp the
``[otlp]`` one; the viewer serves a
page; then the ``[pandas]`` extra on top. Any traceback, or another exit code, fails the run.

    python3 tests/user_install.py [WORK_DIR]      # standard library only; ~2 minutes
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.docs_examples import TUTORIAL, blocks  # noqa: E402  (the checkout's: run as a script)

DURATIONS = REPO / "bench" / "durations.json"  # what the README says this takes, measured
SAMPLE_RUN = "eval_20260904_080000"
OTHER_RUN = "eval_20260903_140200"
SCENARIO = "qa__telephone_inventor"
TRACEBACK = "Traceback (most recent call last)"

# Each command once on the sample corpus, after the README's blocks: (arguments, exit code).
COMMANDS: list[tuple[list[str], int]] = [
    (["ingest"], 2),  # an empty folder has no data/runs: it says so, and names the sample
    (["demo"], 0),
    (["rates"], 0),
    (["rates", "--by", "signal", "--format", "json"], 0),
    (["summary", SAMPLE_RUN], 0),
    (["show", SAMPLE_RUN, SCENARIO], 0),
    (["show", SAMPLE_RUN, "--failed"], 0),
    (["show", "--grep", "phone"], 0),
    (["compare", OTHER_RUN, SAMPLE_RUN], 0),
    (["gate", SAMPLE_RUN, SAMPLE_RUN], 0),
    (["gate", SAMPLE_RUN, OTHER_RUN, "--max-p95-rise", "100"], 3),  # its p95 rose 1,358 ms
    (["history"], 0),
    (["flaky"], 0),
    (["passk"], 0),
    (["latency"], 0),
    (["cost", "--price", "agent=3,15", "--price", "user=0.5,1.5"], 0),
    (["review", SAMPLE_RUN, SCENARIO, "--signal", "judge_passed", "--verdict", "fail", "--reviewer", "smoke"], 0),
    (["reviews", "--history"], 0),
    (["rescore", "--policy", "smoke-people", "--reviews"], 0),
    (["compare-judges", "human", "recorded"], 0),
    (["judges"], 0),
    (["policies"], 0),
    (["sql", "SELECT count(*) AS n FROM scenario_scores", "--format", "csv"], 0),
    (["report", "--out", "report.html"], 0),
    (["check"], 0),
    (["log"], 0),
    (["summary", "no_such_run"], 2),  # a wrong name: a message, not a traceback
]


class Failed(Exception):
    pass


def run(argv: list[str], cwd: Path, env: dict, expect: int = 0, timeout: float = 600,
        stdin: str | None = None) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, input=stdin)
    shown = " ".join(argv).replace("set -euo pipefail\n", "").replace("\n", " | ")
    shown = shown if len(shown) < 160 else shown[:160] + " ..."
    print(f"  {time.monotonic() - started:5.1f} s  exit {done.returncode}  {shown}", flush=True)
    if done.returncode != expect or TRACEBACK in done.stderr or TRACEBACK in done.stdout:
        raise Failed(f"{shown}\nexit {done.returncode} (expected {expect})\n--- stdout\n{done.stdout[-3000:]}"
                     f"\n--- stderr\n{done.stderr[-5000:]}")
    return done


def fresh_folder(root: Path, name: str) -> Path:
    """An empty folder outside the checkout: what a user who installed the wheel starts from."""
    folder = root / name
    folder.mkdir()
    return folder


def install(root: Path) -> Path:
    """The wheel, built the standard way, installed into a new venv with what it declares."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    dist = root / "dist"
    # setuptools' scratch folder keeps the modules of an earlier build, moved or deleted since, and
    # puts them in the wheel (a stale scorelake/html/ once failed here): built afresh, as a clone is
    shutil.rmtree(REPO / "build", ignore_errors=True)
    if not _pip_said(subprocess.run([*pip, "wheel", "--no-deps", "--wheel-dir", str(dist), str(REPO)],
                                    capture_output=True, text=True), "pip wheel"):
        raise SystemExit("user install: the wheel could not be built (pip's words above)")
    (wheel,) = dist.glob("scorelake-*.whl")
    # its dependencies come from the package registry: a failed attempt is made once more (a
    # registry that did not answer is no fault of the wheel), pip's words shown either way
    for attempt in (1, 2):
        if _pip_said(subprocess.run([*pip, "install", str(wheel)], capture_output=True, text=True),
                     f"pip install of the wheel, attempt {attempt}"):
            return wheel
    raise SystemExit("user install: the wheel could not be installed with its declared dependencies (pip's words above)")


def _pip_said(done: subprocess.CompletedProcess, what: str) -> bool:
    """Whether a pip command succeeded; when it did not, the end of what it printed."""
    if done.returncode:
        print(f"  {what} failed (exit {done.returncode}):", flush=True)
        print("\n".join("    " + line for line in (done.stdout + done.stderr).splitlines()[-40:]), flush=True)
    return done.returncode == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise Failed(f"nothing answered at {url}: {process.communicate()[1][-3000:]}") from None
            time.sleep(0.2)


def check_imports(bin_dir: Path, env: dict, cwd: Path) -> None:
    """Every module of the installed package imports, with only the declared dependencies there."""
    code = ("import importlib, pkgutil, scorelake\n"
            "assert scorelake.__file__.startswith(%r), scorelake.__file__\n"
            "names = [m.name for m in pkgutil.walk_packages(scorelake.__path__, 'scorelake.')"
            " if not m.name.endswith('__main__')]\n"
            "for name in names: importlib.import_module(name)\n"
            "print(len(names), 'modules imported')\n") % str(bin_dir.parent)
    done = run([str(bin_dir / "python"), "-c", code], cwd, env)
    if int(done.stdout.split()[0]) < 50:
        raise Failed(f"too few modules found to import: {done.stdout}")
    for absent in ("numpy", "pandas", "pytest"):  # a plain install: none of them, so nothing may need them
        probe = subprocess.run([str(bin_dir / "python"), "-c", f"import {absent}"], capture_output=True, env=env)
        if probe.returncode == 0:
            print(f"  note: {absent} is installed by a declared dependency", flush=True)


def check_readme_shell(bin_dir: Path, env: dict, work: Path) -> None:
    """The README's blocks of scorelake commands, as written, in order (the time-travel block counts
    the versions the blocks before it wrote); the re-judging block against a scripted judge; the
    object-storage block needs an S3 server and is the suite's (test_readme.py)."""
    judge_port = free_port()
    judge = subprocess.Popen([str(bin_dir / "python"), "-m", "tests.judge_server", "--port", str(judge_port),
                              "--delay", "0"], cwd=REPO, env={**env, "PYTHONPATH": str(REPO)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        judge.stdout.readline()  # its address: it listens
        shell_env = {**env, "JUDGE_URL": f"http://127.0.0.1:{judge_port}/v1/chat/completions"}
        run(["scorelake", "demo"], work, shell_env)
        for block in blocks("bash"):
            lines = [line for line in block.splitlines() if not line.startswith("export ")]
            if lines[0].startswith("scorelake ") and "s3://" not in block:
                run(["bash", "-c", "set -euo pipefail\n" + "\n".join(lines)], work, shell_env)
    finally:
        judge.terminate()
        judge.wait(timeout=30)


def check_readme_python(bin_dir: Path, env: dict, work: Path) -> None:
    """The README's and the manual's Python blocks as written, in one namespace (not the Spark one:
    no Spark here)."""
    (work / "readme_examples.py").write_text("\n".join(b for b in blocks("python") if "spark." not in b))
    run([str(bin_dir / "python"), "readme_examples.py"], work, env)


def check_tutorial(bin_dir: Path, env: dict, work: Path) -> None:
    """The tutorial's blocks, in order, in an empty folder of their own."""
    for block in blocks("bash", [TUTORIAL]):
        run(["bash", "-c", "set -euo pipefail\n" + block], work, env)


def check_commands(bin_dir: Path, env: dict, work: Path) -> None:
    for args, expect in COMMANDS:
        run(["scorelake", *args], work, env, expect)
    if "<html" not in (work / "report.html").read_text()[:500].lower():
        raise Failed("report.html is no HTML page")
    cluster = run(["scorelake", "rescore", "--policy", "on-a-cluster", "--dask-address", "tcp://127.0.0.1:9"], work,
                  env, 2)
    if "pip install 'scorelake[dask]'" not in cluster.stderr:
        raise Failed(f"the cluster path without its extra did not name it:\n{cluster.stderr}")
    sent = run(["scorelake", "export", "otlp", "--endpoint", "http://127.0.0.1:9/v1/traces"], work, env, 2)
    if "pip install 'scorelake[otlp]'" not in sent.stderr:
        raise Failed(f"export otlp without its extra did not name it:\n{sent.stderr}")


def check_viewer(bin_dir: Path, env: dict, work: Path) -> None:
    port = free_port()
    viewer = subprocess.Popen(["scorelake", "view", "--port", str(port)], cwd=work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        page = wait_for(f"http://127.0.0.1:{port}/", viewer)
        scenario = wait_for(f"http://127.0.0.1:{port}/runs/{SAMPLE_RUN}/scenarios/{SCENARIO}", viewer)
        if SAMPLE_RUN not in page or SCENARIO not in scenario:
            raise Failed("the viewer's pages do not show the sample run")
        print(f"  viewer served / ({len(page):,} bytes) and a scenario page", flush=True)
    finally:
        viewer.terminate()
        _, errors = viewer.communicate(timeout=30)
    if TRACEBACK in errors:
        raise Failed(f"the viewer logged a traceback:\n{errors[-3000:]}")


def check_pandas_extra(bin_dir: Path, env: dict, work: Path, wheel: Path) -> None:
    """The [pandas] extra on top of the plain install: the answers convert."""
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "--quiet", "--disable-pip-version-check", "install",
                    f"{wheel}[pandas]"], check=True, stderr=subprocess.DEVNULL)
    code = "import scorelake; print(len(scorelake.open('data/warehouse').scenarios().to_pandas()))"
    if run([str(bin_dir / "python"), "-c", code], work, env).stdout.split() != ["46"]:
        raise Failed("the [pandas] extra did not give the sample's 46 scenarios")


def main() -> int:
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
        root.mkdir(parents=True, exist_ok=True)
        return check_install(root)
    with tempfile.TemporaryDirectory(prefix="scorelake-user-") as root:
        return check_install(Path(root))


def check_install(root: Path) -> int:
    started = time.monotonic()
    print(f"user install: the wheel in a fresh venv, used from {root}", flush=True)
    wheel = install(root)
    bin_dir = root / "venv" / "bin"
    # the user's environment: their venv on PATH, no Prefect API, a new Prefect home, no scorelake settings
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "SCORELAKE_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", PREFECT_HOME=str(root / "prefect-home"),
               HOME=str(root / "home"), SCORELAKE_REVIEWER="smoke")
    try:
        check_imports(bin_dir, env, fresh_folder(root, "imports"))
        check_readme_shell(bin_dir, env, fresh_folder(root, "readme-shell"))
        check_readme_python(bin_dir, env, fresh_folder(root, "readme-python"))
        check_tutorial(bin_dir, env, fresh_folder(root, "tutorial"))
        commands = fresh_folder(root, "commands")
        check_commands(bin_dir, env, commands)
        check_viewer(bin_dir, env, commands)
        check_pandas_extra(bin_dir, env, commands, wheel)
    except Failed as failure:
        print(f"user install: FAILED\n{failure}", file=sys.stderr, flush=True)
        return 1
    took = time.monotonic() - started
    stated = json.loads(DURATIONS.read_text())["user_install_s"]
    if not stated / 3 < took < stated * 3:  # the README says how long this takes: kept true
        print(f"user install: took {took:.0f} s, the README says about {stated} s (bench/durations.json): "
              "measure it again and update both", file=sys.stderr, flush=True)
        return 1
    print(f"user install: every check passed in {took:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
