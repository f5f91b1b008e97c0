"""A calibration and ``rates --ppi`` over a large warehouse, each a whole process as a user runs it.

Labels ``--labels`` judged scenarios of the warehouse (people's verdict: the judge's, but wrong on
one in ten of the least confident), then times ``scorelake judges --calibrate recorded`` and
``scorelake rates --ppi`` (median of three). Target: each under 2 s at 100,000 judged scenarios::

    python bench/guarantees.py --warehouse /tmp/scorelake-bench/warehouse_100000 --labels 2000

Writes bench/guarantees.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--labels", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "guarantees.json")
    args = parser.parse_args()
    import scorelake

    wh = scorelake.open(args.warehouse)
    judged = wh.sql("SELECT count(*) AS n FROM judge_confidence WHERE judge = 'recorded'")["n"][0]
    if not wh.sql("SELECT count(*) AS n FROM reviews")["n"][0]:
        picked = wh.sql(f"SELECT run_id, scenario_name, passed, confidence FROM judge_confidence "
                        f"WHERE judge = 'recorded' USING SAMPLE {args.labels} ROWS (reservoir, 7)")
        with tempfile.NamedTemporaryFile("w", suffix=".csv", newline="", delete=False) as f:
            out = csv.writer(f)
            out.writerow(["run_id", "scenario_name", "signal", "verdict", "reviewer"])
            for n, r in enumerate(picked.sort("confidence").iter_rows(named=True)):
                agrees = n >= picked.height // 10 or n % 10
                out.writerow([r["run_id"], r["scenario_name"], "judge_passed",
                              "pass" if r["passed"] == bool(agrees) else "fail", "bench"])
        wh.import_reviews(f.name)
    script = str(Path(sys.executable).with_name("scorelake"))
    calibrate = [timed([script, "judges", "--calibrate", "recorded", "-w", args.warehouse]) for _ in range(3)]
    ppi = [timed([script, "rates", "--ppi", "--format", "json", "-w", args.warehouse]) for _ in range(3)]
    result = {"judged": int(judged), "labels": args.labels, "calibrate_s": statistics.median(calibrate),
              "rates_ppi_s": statistics.median(ppi), "calibrate_rounds_s": calibrate, "rates_ppi_rounds_s": ppi,
              "target_s": 2.0}
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
