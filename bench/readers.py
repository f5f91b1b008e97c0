"""The readers against an earlier scorelake's, in paired rounds: what a change to reading costs or
saves, measured where whole ingests on a shared machine cannot tell it (their times drift by a fifth
within minutes, more than a change of a few percent).

Each round runs, in a fresh process each, what an ingest's worker does with a job of sessions (read
them, frame them, pickle the frames as sent back) for this checkout and for the scorelake installed in
``--before``'s interpreter, the order alternating round by round, and records each one's CPU-seconds.
It reads the store ``bench.py --ingest-only`` builds (``--store``)::

    python bench/readers.py --before /path/to/venv/bin/python --sessions 10 --rounds 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

READ = """
import os, sys, time
from multiprocessing.reduction import ForkingPickler
from pathlib import Path
from scorelake.transforms.sources import ingest_sessions
from scorelake.transforms.sources import Session
store, sessions = Path(sys.argv[1]), int(sys.argv[2])
names = sorted(n for n in os.listdir(store) if n.startswith("eval_"))[:sessions]
start = time.process_time()
for i in range(0, len(names), 10):  # jobs of ten sessions of 500, as an ingest's workers get them
    ForkingPickler.dumps(ingest_sessions([Session(n, store / n, "nemo", None) for n in names[i:i + 10]]))
print(time.process_time() - start)
"""


def cpu_seconds(python: str | None, store: Path, sessions: int) -> float:
    """The CPU-seconds one fresh process spends reading ``sessions`` sessions of ``store``: this
    checkout's readers (``python`` None) or those of the scorelake installed in ``python``."""
    from bench.bench import scorelake_process

    interpreter, env, cwd = scorelake_process(python)
    done = subprocess.run([interpreter, "-c", READ, str(store), str(sessions)], env=env, cwd=cwd, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, metavar="PYTHON",
                        help="an interpreter with the earlier scorelake installed")
    parser.add_argument("--store", type=Path, default=Path("/tmp/scorelake-bench/store_100000"))
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "readers.json")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    rounds = []
    for i in range(args.rounds):
        if i % 2:
            before = cpu_seconds(args.before, args.store, args.sessions)
            after = cpu_seconds(None, args.store, args.sessions)
        else:
            after = cpu_seconds(None, args.store, args.sessions)
            before = cpu_seconds(args.before, args.store, args.sessions)
        rounds.append({"before_cpu_s": before, "after_cpu_s": after})
        print(json.dumps(rounds[-1]), flush=True)
    before, after = [r["before_cpu_s"] for r in rounds], [r["after_cpu_s"] for r in rounds]
    paired = [r["after_cpu_s"] / r["before_cpu_s"] for r in rounds]
    report = {"before": args.before, "sessions": args.sessions, "rounds": rounds,
              "median_before_cpu_s": statistics.median(before), "median_after_cpu_s": statistics.median(after),
              "after_over_before_summed": sum(after) / sum(before),
              "after_over_before_paired_median": statistics.median(paired),
              "after_less_in_rounds": sum(p < 1 for p in paired)}
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "rounds"}))


if __name__ == "__main__":
    main()
