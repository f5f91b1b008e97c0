"""The way past one machine: `ingest`, `rescore` and `rejudge` on a Dask cluster started apart (a
`dask scheduler` and two `dask worker` processes, as a team runs them), the warehouse on object
storage (the suite's S3-compatible server). The workers read the runs, score batches of runs and ask
the judge, and hand back what they made; the flow is the one process that commits (every commit
names its process). A worker killed mid-run loses nothing: its work is done again on the worker
left, and a run cut short is completed by the next."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tests.judge_server import JudgeServer, Reply

pytestmark = pytest.mark.slow
SESSIONS, PER_SESSION = 4, 1000


class Cluster:
    """The client of a cluster started apart, its processes by name, and how to add a worker."""

    def __init__(self, client, processes: dict, add_worker):
        self.client, self.processes, self.add_worker = client, processes, add_worker

    def run_killing_a_worker(self, command: subprocess.Popen) -> tuple[str, str, str]:
        """Wait for ``command``, killing (SIGKILL, its nanny and all: a machine gone) the first
        worker seen holding one of its tasks: (stdout, stderr, the worker's name)."""
        killed = None
        while command.poll() is None and killed is None:
            busy = [w for w, tasks in self.client.processing().items() if tasks]
            if busy:
                killed = self.client.scheduler_info()["workers"][busy[0]]["name"]
                os.killpg(self.processes[killed].pid, signal.SIGKILL)
            time.sleep(0.02)
        out, err = command.communicate(timeout=600)
        assert killed, "the command ended before any task ran on a worker"
        return out, err, killed


@pytest.fixture
def cluster(s3_server, tmp_path):
    """A scheduler and two workers, each its own process group (a worker's nanny with it), the
    workers with the object store's credentials in their environment as a team's would have."""
    from distributed import Client

    bin_dir = Path(sys.executable).parent
    scheduler_file = tmp_path / "scheduler.json"
    logs = tmp_path / "dask"
    logs.mkdir()

    def start(name: str, *args: str) -> subprocess.Popen:
        with open(logs / f"{name}.log", "w") as log:
            return subprocess.Popen([str(bin_dir / "dask"), *args], stdout=log, stderr=subprocess.STDOUT,
                                    env={**os.environ, **s3_server}, start_new_session=True)

    processes = {"scheduler": start("scheduler", "scheduler", "--scheduler-file", str(scheduler_file),
                                    "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0")}
    deadline = time.monotonic() + 60
    while not scheduler_file.exists():
        assert time.monotonic() < deadline, (logs / "scheduler.log").read_text()
        time.sleep(0.1)

    def add_worker(name: str) -> None:
        processes[name] = start(name, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "1",
                                "--nthreads", "1", "--no-dashboard", "--name", name)

    add_worker("w1")
    add_worker("w2")
    client = Client(scheduler_file=str(scheduler_file), timeout=30)
    client.wait_for_workers(2, timeout=60)
    try:
        yield Cluster(client, processes, add_worker)
    finally:
        client.close()
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def scorelake(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "scorelake", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_ingest_rescore_and_rejudge_on_a_cluster_started_apart(prefect_server, cluster, s3_warehouse, tmp_path):
    from prefect.settings import PREFECT_API_URL

    from bench.bench import SOURCE
    from bench.synth import build_store

    address = cluster.client.scheduler.address
    runs = tmp_path / "runs"
    build_store(SOURCE, runs, SESSIONS * PER_SESSION, per_session=PER_SESSION)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_LOGGING_LEVEL": "ERROR"}

    # a worker killed while it reads a session
    ingest = scorelake("ingest", str(runs), "-w", s3_warehouse, "--dask-address", address, env=env)
    out, err, _ = cluster.run_killing_a_worker(ingest)
    # its session was read again on the worker left; had it not been, the next ingest would read it
    again = scorelake("ingest", str(runs), "-w", s3_warehouse, "--dask-address", address, env=env)
    again_out, again_err = again.communicate(timeout=600)
    assert again.returncode == 0, again_err
    assert ingest.returncode == 0, err  # Dask gave the lost task to the worker left
    assert f"{SESSIONS} ingested" in err and f"0 ingested, {SESSIONS} unchanged" in again_err
    scenarios = pl.read_delta(f"{s3_warehouse}/scenarios")
    assert scenarios.height == SESSIONS * PER_SESSION  # nothing lost, nothing twice
    assert scenarios.select("run_id", "scenario_name").n_unique() == scenarios.height

    # a worker killed while it scores a batch of runs: scored again on the other, committed once
    cluster.add_worker("w3")
    cluster.client.wait_for_workers(2, timeout=60)
    rescore = scorelake("rescore", "--policy", "lenient", "--judge-threshold", "0.5", "-w", s3_warehouse,
                        "--dask-address", address, env=env)
    _, rescore_err, _ = cluster.run_killing_a_worker(rescore)
    assert rescore.returncode == 0, rescore_err
    assert f"{SESSIONS * PER_SESSION} scenarios scored" in rescore_err
    lenient = pl.read_delta(f"{s3_warehouse}/policies").filter(pl.col("name") == "lenient")["policy_id"][0]
    scores = pl.read_delta(f"{s3_warehouse}/scores").filter(pl.col("policy_id") == lenient)
    assert scores.height == scores.select("run_id", "scenario_name").n_unique() == SESSIONS * PER_SESSION

    # a worker killed while it asks the judge: its batch asked again on the other, committed once
    cluster.add_worker("w4")
    cluster.client.wait_for_workers(2, timeout=60)
    first_run = sorted(scenarios["run_id"].unique())[0]
    with JudgeServer(lambda payload, n: Reply(content=json.dumps({"score": 0.9, "reason": "fine"}))) as judge:
        rejudge = scorelake("rejudge", "--judge", "again", "--judge-url", judge.url, "--run", first_run,
                            "-w", s3_warehouse, "--dask-address", address, env={**env, "JUDGE_API_KEY": "k"})
        _, rejudge_err, _ = cluster.run_killing_a_worker(rejudge)
    assert rejudge.returncode == 0, rejudge_err
    judged = pl.read_delta(f"{s3_warehouse}/judgements").filter(pl.col("judge") == "again")
    askable = pl.read_delta(f"{s3_warehouse}/judge_inputs").filter((pl.col("run_id") == first_run) & pl.col("askable"))
    assert judged.height == askable.height > 0 and judged["score"].unique().to_list() == [0.9]
    assert judged.select("scenario_name", "input_hash").n_unique() == judged.height
    assert "ran as a Prefect flow" in rejudge_err

    # one committer: every commit to every table made by a command's own process, none by a worker
    from deltalake import DeltaTable

    from scorelake.storage import COMMITTER_KEY, TABLES

    command = {name: f"{socket.gethostname()}:{p.pid}" for name, p in (
        ("ingest", ingest), ("again", again), ("rescore", rescore), ("rejudge", rejudge))}
    commits = {(table, entry[COMMITTER_KEY]) for table in TABLES
               for entry in DeltaTable(f"{s3_warehouse}/{table}").history() if COMMITTER_KEY in entry}
    assert {"scores", "judgements", "scenarios"} <= {table for table, _ in commits}
    assert {committer for _, committer in commits} <= set(command.values()), commits
    assert {("scores", command["rescore"]), ("judgements", command["rejudge"])} <= commits


def test_a_scheduler_killed_mid_ingest_is_one_line_and_the_same_command_finishes_it(prefect_server, cluster,
                                                                                    tmp_path):
    """The scheduler killed (SIGKILL, a machine gone) while a worker reads a session: the command
    fails (exit 1) with one line naming the cluster, not the engine's traceback; once a cluster is
    back the same command ingests every session, none twice."""
    from prefect.settings import PREFECT_API_URL

    from bench.bench import SOURCE
    from bench.synth import build_store

    address = cluster.client.scheduler.address
    runs, warehouse = tmp_path / "runs", str(tmp_path / "wh")
    build_store(SOURCE, runs, SESSIONS * PER_SESSION, per_session=PER_SESSION)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_LOGGING_LEVEL": "ERROR"}
    ingest = scorelake("ingest", str(runs), "-w", warehouse, "--dask-address", address, env=env)
    deadline = time.monotonic() + 300
    while ingest.poll() is None and not any(cluster.client.processing().values()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(cluster.processes["scheduler"].pid, signal.SIGKILL)
    _, err = ingest.communicate(timeout=600)
    said = [line for line in err.splitlines() if line.strip()]
    assert ingest.returncode == 1 and "Traceback" not in err, err
    assert any(line.startswith(f"error: the Dask cluster at {address} failed the run") for line in said), err
    again = scorelake("ingest", str(runs), "-w", warehouse, env=env)  # on this machine: the cluster is gone
    _, again_err = again.communicate(timeout=600)
    assert again.returncode == 0, again_err
    scenarios = pl.read_delta(f"{warehouse}/scenarios")
    assert scenarios.height == scenarios.select("run_id", "scenario_name").n_unique() == SESSIONS * PER_SESSION


def test_a_local_cluster_keeps_its_logs_to_itself_unless_verbose(prefect_server, tmp_path):
    """The Dask path on a local cluster prints what an ingest prints, not the cluster's own lines
    (scheduler, nannies, workers: about 40 a run); --verbose shows them."""
    from prefect.settings import PREFECT_API_URL

    from tests.conftest import REPO

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    done = subprocess.run([sys.executable, "-m", "scorelake", "ingest", str(REPO / "data" / "runs"), "--task-runner",
                           "dask", "-w", str(tmp_path / "wh")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "distributed." not in done.stdout + done.stderr, done.stderr[-3000:]
