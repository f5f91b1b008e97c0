"""Shared fixtures: the ground-truth corpus (../shared, else the repository's packed copy), one
Prefect server, one ingested warehouse."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.ground_truth import REPO, shared_root  # noqa: F401 (REPO: the tests take it from here)

SHARED = shared_root()
# Output not to a terminal has no width to fit (cli/_terminal.py), and the tests read it so: the fast
# loop's workers (pytest-xdist) would otherwise inherit the COLUMNS=80 xdist sets, and wrap it.
os.environ.pop("COLUMNS", None)
CONFORMANCE = SHARED / "conformance" / "runs"
BASELINE = "eval_20260904_080000"

# A probe process's own peak memory in MB, printed. Its VmHWM, not ru_maxrss: Linux carries
# ru_maxrss over from the parent across fork + exec, and the suite's pytest process passes 1 GB.
PRINT_PEAK_MB = "print(int([l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]) // 1024)"

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")


def pytest_sessionstart(session):
    session.config.stash[_STARTED] = time.monotonic()


def pytest_sessionfinish(session, exitstatus):
    """The whole suite, as CI runs it, takes about what the README says (bench/durations.json's
    ``suite_s``): a suite three times slower or faster than stated fails, so the figure is kept true."""
    config = session.config
    whole = (not config.option.markexpr and not config.option.keyword and not hasattr(config, "workerinput")
             and {Path(a).resolve() for a in config.args} <= {REPO / "tests", REPO})
    if not whole or exitstatus != 0:
        return
    took = time.monotonic() - config.stash[_STARTED]
    stated = json.loads((REPO / "bench" / "durations.json").read_text())["suite_s"]
    if not stated / 3 < took < stated * 3:
        print(f"\nthe suite took {took:.0f} s; the README says about {stated} s (bench/durations.json): "
              "measure it again and update both", flush=True)
        session.exitstatus = 1


_STARTED = pytest.StashKey[float]()


def conformance_sessions() -> list[str]:
    return sorted(p.name for p in CONFORMANCE.glob("eval_*"))


def upstream_metrics(session: str) -> list[dict]:
    """Every scenario's metrics.json of a conformance session, as upstream wrote it."""
    return json.loads((CONFORMANCE / session / "all_metrics.json").read_text())


# all_summary.txt's labels -> the rate_rollup column prefix of the same (passed, total) pair.
SUMMARY_RATES = {
    "Overall Success Rate": "success", "Task Success Rate (excl. clean_exit)": "task",
    "Action-list match": "action_match", "DB-State match": "db_state_match",
    "DB-State-Assertion pass": "db_state_assertion", "NL-Assertion pass": "nl_assertion",
    "Judge passed (>= threshold)": "judge_passed", "Clean exit": "clean_exit",
}
SUMMARY_DOMAIN_BLOCKS = {
    "Per-Domain Success Rate:": "success", "Per-Domain Task Success Rate (excl. clean_exit):": "task",
    "Per-Domain DB-State Match Rate:": "db_state_match", "Per-Domain NL-Assertion Pass Rate:": "nl_assertion",
    "Per-Domain DB-State-Assertion Pass Rate:": "db_state_assertion",
}


def summary_rates(session: str) -> dict[tuple[str, str], tuple[int, int]]:
    """Every ``NN.NN% (passed/total`` figure of a session's all_summary.txt as upstream printed it,
    keyed by (domain, rate) with domain '(all)' for the run-wide lines."""
    text = (CONFORMANCE / session / "all_summary.txt").read_text()
    rates = {}
    for m in re.finditer(r"^ *([^:\n]+): +[\d.]+% \((\d+)/(\d+)", text, re.M):
        if m[1].strip() in SUMMARY_RATES:
            rates["(all)", SUMMARY_RATES[m[1].strip()]] = (int(m[2]), int(m[3]))
    for title, rate in SUMMARY_DOMAIN_BLOCKS.items():
        if title in text:
            block = text.split(title, 1)[1].split("\n\n", 1)[0]
            for m in re.finditer(r"^  ([^:\n]+): [\d.]+% \((\d+)/(\d+)\)", block, re.M):
                rates[m[1], rate] = (int(m[2]), int(m[3]))
    return rates


# A test that uses one of these fixtures gets the marker; every test with one of them is also slow,
# so `pytest -m "not slow"` is the developer's fast loop (CI runs everything).
MARKER_OF_FIXTURE = {"s3_server": "s3", "prefect_server": "prefect", "browser": "browser"}


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture, marker in MARKER_OF_FIXTURE.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if any(item.get_closest_marker(marker) for marker in MARKER_OF_FIXTURE.values()):
            item.add_marker("slow")


@pytest.fixture(scope="session", autouse=True)
def _shared_corpus_present():
    if not CONFORMANCE.is_dir():
        pytest.exit(f"ground-truth corpus not found at {CONFORMANCE} (set SCORELAKE_SHARED)", returncode=2)


@pytest.fixture(scope="session")
def prefect_server():
    """One temporary Prefect API server for the whole test session (it takes seconds to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def ingested(tmp_path_factory):
    """A warehouse holding the whole conformance corpus, built by the ingest flow's body in-process
    (as a command with no Prefect API configured runs it; the Prefect path is tested on its own)."""
    from scorelake.flows.flow_bodies import InProcess, ingest
    from scorelake.storage import Store

    root = tmp_path_factory.mktemp("warehouse")
    result = ingest(InProcess(), runs_dirs=[str(CONFORMANCE)], warehouse=str(root))
    return Store(root), result


def no_prefect_env(prefect_home: Path) -> dict:
    """The environment of a user with no Prefect API configured and a new, empty PREFECT_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_") or k == "PREFECT_LOGGING_LEVEL"}
    return {**env, "PREFECT_HOME": str(prefect_home)}


@pytest.fixture
def runs_copy(tmp_path):
    """A writable copy of selected conformance sessions, for tests that change files."""

    def make(*sessions: str) -> Path:
        target = tmp_path / "runs"
        for name in sessions:
            shutil.copytree(CONFORMANCE / name, target / name)
            for path in (target / name).rglob("*"):
                path.chmod(path.stat().st_mode | 0o200)
            (target / name).chmod(0o755)
        return target

    return make


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A local S3-compatible server (moto's server mode, its own process: delta-rs calls from this
    one would otherwise wait on a server thread needing this process's GIL) for the whole test
    session; this process's environment points delta-rs at it, and the returned environment does the
    same for subprocesses."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path_factory.mktemp("moto") / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/moto-api/", timeout=1)
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError(f"the S3 server did not start: see {log.name}")
            time.sleep(0.2)
    env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "scorelake", "AWS_SECRET_ACCESS_KEY": "scorelake",
           "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.terminate()
        server.wait(timeout=30)
        log.close()




@pytest.fixture
def s3_warehouse(s3_server, request):
    """The URL of a warehouse in a new, empty bucket."""
    import boto3

    bucket = "scorelake-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
    boto3.client("s3", endpoint_url=s3_server["AWS_ENDPOINT_URL"]).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/warehouse"
