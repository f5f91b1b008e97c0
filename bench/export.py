"""``scorelake export otlp`` of about 100,000 verdicts to a local OpenTelemetry backend (Arize Phoenix,
started as the tests start it: tests/phoenix_server.py), as a whole process, the backend's own time
to take each batch included. Target: under 30 s::

    python bench/export.py --warehouse /tmp/scorelake-bench/warehouse_100000 --verdicts 100000

Writes bench/export.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", required=True)
    parser.add_argument("--verdicts", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "export.json")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    import scorelake
    from tests.phoenix_server import Phoenix

    wh = scorelake.open(args.warehouse)
    signals = ("is_action_match", "db_state_match", "db_state_assertion_pass_rate", "nl_assertion_pass_rate",
               "judge_passed", "clean_exit", "communicate")
    per_run = wh.sql("SELECT run_id, count(*) + " + " + ".join(f"count({s})" for s in signals) + " AS events "
                     "FROM scenario_scores JOIN stg_policies USING (policy_id) WHERE name = 'recorded' "
                     "GROUP BY run_id ORDER BY run_id")
    runs, planned = [], 0
    for run, events in per_run.iter_rows():
        if planned >= args.verdicts:
            break
        runs.append(run)
        planned += events
    with tempfile.TemporaryDirectory() as work:
        server = Phoenix(Path(work))
        try:
            script = str(Path(sys.executable).with_name("scorelake"))
            command = [script, "export", "otlp", "--endpoint", server.traces, "-w", args.warehouse]
            for run in runs:
                command += ["--run", run]
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - start
        finally:
            server.stop()
    sent = done.stderr.strip().splitlines()[-1]
    result = {"runs": len(runs), "seconds": seconds, "said": sent, "target_s": 30.0}
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
