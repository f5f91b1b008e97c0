"""Every example of the README runs, against the data it names: the Python blocks, and the shell
blocks of scorelake commands (the Prefect server block is `test_serve.py`'s; the object-storage
block runs against the suite's S3 server, its `export` lines of placeholders replaced by its address)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow]

BIN = str(Path(sys.executable).parent)


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (REPO / "README.md").read_text(), re.S)


@pytest.fixture
def sample_dir(tmp_path, monkeypatch) -> Path:
    """A folder holding the embedded sample as data/runs, the current directory of the examples."""
    shutil.copytree(REPO / "data" / "runs", tmp_path / "data" / "runs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCORELAKE_WAREHOUSE", raising=False)
    return tmp_path


def run_shell(block: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    script = "set -euo pipefail\n" + "\n".join(line for line in block.splitlines() if not line.startswith("export "))
    done = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {}), "PATH": f"{BIN}:{os.environ['PATH']}"})
    assert done.returncode == 0, (block, done.stderr[-3000:])
    return done


def test_the_python_examples_run_on_the_sample(sample_dir):
    """Every Python block, in order and in one namespace (the Spark one needs a Spark session with
    the Delta package, which this machine has not: it is left out)."""
    python = [b for b in blocks("python") if "spark." not in b]
    assert len(python) >= 2
    namespace: dict = {}
    for block in python:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["then"].policies()["name"].to_list() == ["recorded"]


def test_the_shell_examples_run_on_the_sample(sample_dir):
    shell = [b for b in blocks("bash") if b.lstrip().startswith("scorelake ")]
    assert len(shell) == 4  # re-scoring, voice analytics, human review, then time travel
    run_shell("scorelake ingest", sample_dir)
    rescored, analysed, reviewed, travelled = (run_shell(block, sample_dir) for block in shell)
    assert "1358" in analysed.stdout and "4358" in analysed.stdout  # the sample's all_summary.txt p50 and p95
    assert "Overall Success Rate" in rescored.stdout
    assert "threshold in use: 0.9; best threshold: none (too few labels" in reviewed.stdout
    assert "recall" in reviewed.stdout
    assert "refused: no version that old" in travelled.stdout
    assert "exact McNemar" in travelled.stdout


def test_the_object_storage_example_runs_against_s3(sample_dir, s3_server):
    import boto3

    boto3.client("s3", endpoint_url=s3_server["AWS_ENDPOINT_URL"]).create_bucket(Bucket="evals")
    (block,) = [b for b in blocks("bash") if "s3://evals" in b]
    done = run_shell(block, sample_dir, s3_server)
    assert "eval_20260904_080000 (policy recorded)" in done.stdout


def test_the_rejudge_example_runs_against_a_scripted_judge(sample_dir):
    """The re-judging block, its $JUDGE_URL a scripted judge on 127.0.0.1 that answers every request."""
    from tests.judge_server import JudgeServer, Reply

    (block,) = [b for b in blocks("bash") if "scorelake rejudge" in b]
    run_shell("scorelake ingest", sample_dir)
    with JudgeServer(lambda payload, n: Reply(content='{"score": 0.96, "reason": "fine"}')) as server:
        done = run_shell(block, sample_dir, {"JUDGE_URL": server.url})
        asked = len(server.requests)
    assert asked == 7 + 46  # the recorded judge's 7 failures, then every input for the new model
    assert "Overall Success Rate" in done.stdout and "kappa" in done.stdout and "gpt-5-mini" in done.stdout
