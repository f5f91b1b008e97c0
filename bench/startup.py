"""Start-up of whole commands, as a user runs them: run on demand, not in CI.

    .venv/bin/python bench/startup.py

Each command runs as its own process through the installed ``scorelake`` console script on the
embedded sample (data/runs), several times; the median is reported, beside the floor of importing
DuckDB and Polars in a bare interpreter, in one run. With no Prefect API configured, so the
commands run in-process; then once with ``--prefect`` on a new, empty PREFECT_HOME (a temporary
server's first start) and once more on the same home (its warm start). Writes bench/startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCORELAKE = str(Path(sys.executable).parent / "scorelake")
# Targets of issue 9, as ratios of medians measured in the same run.
TARGETS = {"sql_vs_import_floor": 1.5, "noop_ingest_vs_sql": 2.0, "full_ingest_vs_sql": 3.0}


def timed(args: list[str], env: dict, before=None) -> float:
    if before:
        before()
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def median(args: list[str], env: dict, repeat: int, before=None) -> float:
    timed(args, env, before)  # first run warms the page cache
    return statistics.median(timed(args, env, before) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "startup.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scorelake-startup-"))
    warehouse = work / "warehouse"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(SCORELAKE_WAREHOUSE=str(warehouse), PREFECT_HOME=str(work / "prefect-home"))

    def fresh_warehouse() -> None:
        shutil.rmtree(warehouse, ignore_errors=True)

    seconds = {
        "import_floor": median([sys.executable, "-c", "import duckdb, polars"], env, args.repeat),
        "full_ingest": median([SCORELAKE, "ingest"], env, args.repeat, fresh_warehouse),
        "noop_ingest": median([SCORELAKE, "ingest"], env, args.repeat),
        "sql": median([SCORELAKE, "sql", "select 1"], env, args.repeat),
        "rates": median([SCORELAKE, "rates"], env, args.repeat),
        "rescore_stored_policy": median([SCORELAKE, "rescore", "--judge-threshold", "0.8"], env, args.repeat),
    }
    # A temporary Prefect server, first start on an empty home, then warm.
    prefect_env = {**env, "PREFECT_HOME": str(work / "prefect-fresh")}
    seconds["prefect_ingest_first_start"] = timed([SCORELAKE, "ingest", "--prefect", "--force"], prefect_env)
    seconds["prefect_ingest_warm"] = timed([SCORELAKE, "ingest", "--prefect", "--force"], prefect_env)
    ratios = {"sql_vs_import_floor": seconds["sql"] / seconds["import_floor"],
              "noop_ingest_vs_sql": seconds["noop_ingest"] / seconds["sql"],
              "full_ingest_vs_sql": seconds["full_ingest"] / seconds["sql"]}
    result = {"machine": {"cpus": os.cpu_count()}, "repeat": args.repeat, "seconds": seconds, "ratios": ratios,
              "targets": TARGETS, "met": {k: ratios[k] <= v for k, v in TARGETS.items()}}
    shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
