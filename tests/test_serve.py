"""The scheduled deployment, served by `scorelake serve` and run once through the Prefect API."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import anyio

from scorelake.flows.prefect_flows import ingest_flow
from scorelake.storage import Store
from scorelake.pipeline import save_policy
from scorelake.transforms.scoring import Policy

DEPLOYMENT = "scorelake-refresh/test-serve"


async def _wait_for_deployment(deadline: float) -> None:
    from prefect.client.orchestration import get_client

    async with get_client() as client:
        while True:
            try:
                await client.read_deployment_by_name(DEPLOYMENT)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                await anyio.sleep(1)


def test_served_deployment_ingests_new_runs_and_rescores_stored_policies(prefect_server, runs_copy, tmp_path):
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL

    runs = runs_copy("eval_20260904_080000")
    wh = Store(tmp_path / "wh")
    ingest_flow(runs_dirs=[str(runs)], warehouse=str(wh.tables.root))
    lenient = Policy(name="lenient-judge", judge_threshold=0.8)
    save_policy(wh, lenient)  # stored, not yet scored: the scheduled run must score it
    runs_copy("eval_20260902_091500")  # a new session arrives

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    server = subprocess.Popen(
        [sys.executable, "-m", "scorelake", "serve", str(runs), "--cron", "0 0 1 1 *", "--name", "test-serve",
         "--warehouse", str(wh.tables.root)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        anyio.run(_wait_for_deployment, time.monotonic() + 120)
        flow_run = run_deployment(DEPLOYMENT, timeout=300)
        assert flow_run.state.is_completed(), flow_run.state
    finally:
        server.terminate()
        output = server.communicate(timeout=60)[0]
    assert "serving deployment" in output

    with wh.views.connect() as con:
        counts = dict(con.execute(
            "SELECT run_id, count(*) FROM scenario_scores WHERE policy_id = ? GROUP BY run_id",
            [lenient.id]).fetchall())
    assert counts == {"eval_20260902_091500": 34, "eval_20260904_080000": 14}


def test_serve_without_a_running_server_says_only_that_it_needs_one(tmp_path):
    """No temporary server is announced first: serve cannot run on one (it has no scheduler)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}, "PREFECT_API_URL": "",
           "PREFECT_HOME": str(tmp_path / "prefect")}
    (tmp_path / "runs").mkdir()
    done = subprocess.run([sys.executable, "-m", "scorelake", "serve", str(tmp_path / "runs"), "--interval", "60",
                           "-w", str(tmp_path / "wh")], capture_output=True, text=True, env=env, timeout=120)
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(said) == 1 and "serve needs a running Prefect server" in said[0], said
