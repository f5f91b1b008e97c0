"""Start-up and orchestration as a user meets them: whole processes, a fresh PREFECT_HOME, the
README's first command; in-process without a Prefect API, Prefect flow runs with one."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from tests.conftest import CONFORMANCE, REPO, no_prefect_env

pytestmark = [pytest.mark.slow]

SCORELAKE = str(Path(sys.executable).parent / "scorelake")
MIXED = "eval_20260902_091500"


def readme_first_command() -> str:
    block = re.search(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)[1]
    return block.splitlines()[0]


def test_readme_first_command_works_on_a_fresh_machine_without_a_server(tmp_path):
    home = tmp_path / "prefect-home"
    env = {**no_prefect_env(home), "SCORELAKE_WAREHOUSE": str(tmp_path / "wh")}
    done = subprocess.run(["bash", "-c", readme_first_command()], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "2 ingested, 0 unchanged, 0 refused" in done.stderr
    assert "ran in-process: no Prefect API configured" in done.stderr
    for run_id in ("eval_20260903_140200", "eval_20260904_080000"):
        assert f"{run_id} (policy recorded)" in done.stdout
    assert not home.exists(), "no Prefect server (nor its database) may be started"


def test_prefect_on_request_starts_a_temporary_server_that_a_first_start_survives(tmp_path):
    home = tmp_path / "prefect-home"
    env = {**no_prefect_env(home), "SCORELAKE_WAREHOUSE": str(tmp_path / "wh")}
    done = subprocess.run([SCORELAKE, "ingest", str(CONFORMANCE / MIXED), "--prefect"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "starting a temporary local Prefect server" in done.stderr
    assert "ran as a Prefect flow on a temporary local server" in done.stderr
    assert (home / "prefect.db").exists()  # the runs were recorded by that server


async def _runs_of(flow_name: str) -> list[tuple[str, list[str]]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName, TaskRunFilter, TaskRunFilterFlowRunId

    async with get_client() as client:
        runs = await client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])))
        found = []
        for run in runs:
            tasks = await client.read_task_runs(
                task_run_filter=TaskRunFilter(flow_run_id=TaskRunFilterFlowRunId(any_=[run.id])))
            found.append((run.state_name, sorted(t.name for t in tasks)))
        return found


def test_with_an_api_configured_commands_run_as_prefect_flows_seen_in_it(prefect_server, runs_copy, tmp_path):
    from prefect.settings import PREFECT_API_URL

    runs = runs_copy(MIXED, "eval_20260904_080000")
    env = {**no_prefect_env(tmp_path / "home"), "PREFECT_API_URL": PREFECT_API_URL.value()}
    done = subprocess.run([SCORELAKE, "ingest", str(runs), "-w", str(tmp_path / "wh")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"ran as a Prefect flow on {PREFECT_API_URL.value()}" in done.stderr
    runs_seen = anyio.run(_runs_of, "scorelake-ingest")
    assert ("Completed", ["ingest eval_20260902_091500", "ingest eval_20260904_080000"]) in runs_seen


def _api_url_as_a_command_sees_it(env: dict, cwd: Path) -> str:
    code = "from scorelake.flows.runtime import configured_api_url; import sys; print(configured_api_url(), 'prefect' in sys.modules)"
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd,
                          capture_output=True, text=True, check=True).stdout.strip()


def test_an_api_url_in_the_active_profile_counts(tmp_path):
    home = tmp_path / "home"
    assert _api_url_as_a_command_sees_it(no_prefect_env(home), tmp_path) == "None False"  # Prefect not imported
    home.mkdir()
    (home / "profiles.toml").write_text(textwrap.dedent("""
        active = "team"
        [profiles.team]
        PREFECT_API_URL = "http://127.0.0.1:4299/api"
    """))
    assert _api_url_as_a_command_sees_it(no_prefect_env(home), tmp_path) == "http://127.0.0.1:4299/api True"


def test_read_commands_import_neither_prefect_nor_the_scoring_code(ingested):
    wh, _ = ingested
    code = textwrap.dedent(f"""
        import sys
        from scorelake.cli import app
        for args in (["sql", "select 1"], ["rates"], ["rates", "--by", "signal"], ["history"], ["policies"],
                     ["summary", "{MIXED}"]):
            try:
                app([*args, "-w", {str(wh.tables.root)!r}])
            except SystemExit as exit:
                assert exit.code == 0, args
        loaded = [m for m in sys.modules if m.split(".")[0] in ("prefect", "pyarrow", "pydantic")
                  or m.startswith(("scorelake.pipeline", "scorelake.transforms.scoring", "scorelake.transforms.sources"))]
        print(sorted(loaded))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_an_ingest_worker_process_imports_only_the_readers_and_the_scorers(tmp_path):
    """An ingest's worker process (a process per core) unpickles its task function and imports what
    that needs: not DuckDB, Delta, Arrow, Prefect, numpy, the judge's client or the flows, which the
    command's own process has (they took each worker half a second and 30 MB)."""
    sent = tmp_path / "job.pickle"
    subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from multiprocessing.reduction import ForkingPickler
        from scorelake.flows.flow_bodies import ingest_sessions_job
        open({str(sent)!r}, "wb").write(bytes(ForkingPickler.dumps(ingest_sessions_job)))
    """)], cwd=REPO, check=True)
    worker = textwrap.dedent(f"""
        import pickle, sys
        pickle.loads(open({str(sent)!r}, "rb").read())  # what a worker does first
        heavy = {{"duckdb", "deltalake", "pyarrow", "prefect", "numpy", "httpx", "rich", "typer"}}
        print(sorted({{m.split(".")[0] for m in sys.modules}} & heavy))
        print(sorted(m for m in sys.modules if m.startswith(("scorelake.flows.", "scorelake._api",
              "scorelake.storage", "scorelake.transforms.judging", "scorelake.transforms.analysis"))))
    """)
    done = subprocess.run([sys.executable, "-c", worker], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "['scorelake.flows.ingest_job']"]
