"""Re-judging at scale: run on demand, not in CI.

    .venv/bin/python bench/rejudge.py --calls 10000 --concurrency 64 --delay 0.1
    .venv/bin/python bench/rejudge.py --calls 10000 --repeat 5     # writes bench/rejudge-repeat-5.json

Builds a synthetic store of ``--calls`` scenarios (bench/synth.py: real upstream files, each with its
stored judge input), ingests it, starts the scripted judge (tests/judge_server.py) in a process of
its own answering every request after ``--delay`` seconds, and times ``scorelake rejudge`` as a user
runs it (the console script, in-process, no Prefect API), with its peak memory. The bound is what
the concurrency allows: calls x repeats x delay / concurrency; the target is 1.3x of it. Memory is flat when
the peak at a fifth of the calls is about the peak at all of them. Writes bench/rejudge.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "data" / "runs" / "eval_20260904_080000"
SCORELAKE = str(Path(sys.executable).parent / "scorelake")
TARGET = 1.3


def rejudge(warehouse: Path, url: str, judge: str, concurrency: int, repeat: int) -> dict:
    """One `scorelake rejudge` process: wall time and peak RSS (its own, by wait4)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    started = time.perf_counter()
    process = subprocess.Popen([SCORELAKE, "rejudge", "--judge", judge, "--judge-url", url, "--judge-model", "bench",
                                "--concurrency", str(concurrency), "--repeat", str(repeat), "-w", str(warehouse)],
                               env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    stderr = process.stderr.read()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"rejudge failed: {stderr}")
    return {"seconds": seconds, "peak_rss_mb": usage.ru_maxrss / 1024, "said": stderr.strip().splitlines()[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=1, help="asks per input (rejudge --repeat)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/scorelake-bench-rejudge"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    args.out = args.out or REPO / "bench" / ("rejudge.json" if args.repeat == 1 else f"rejudge-repeat-{args.repeat}.json")
    sys.path.insert(0, str(REPO))
    from bench.synth import build_store

    args.work.mkdir(parents=True, exist_ok=True)
    small = max(1, args.calls // 5)
    report: dict = {"machine": {"cpus": os.cpu_count()}, "calls": args.calls, "concurrency": args.concurrency,
                    "server_delay_s": args.delay, "repeat": args.repeat}
    stores = {}
    for n in (small, args.calls):
        store, warehouse = args.work / f"store_{n}", args.work / f"warehouse_{n}"
        subprocess.run(["rm", "-rf", str(warehouse)], check=True)
        build_store(SOURCE, store, n)
        # in a process of its own: a child's peak RSS (wait4) starts from its parent's at the fork
        subprocess.run([SCORELAKE, "ingest", str(store), "-w", str(warehouse)], check=True, capture_output=True)
        stores[n] = warehouse
    server = subprocess.Popen([sys.executable, "-m", "tests.judge_server", "--delay", str(args.delay)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        for n, warehouse in stores.items():
            bound = n * args.repeat * args.delay / args.concurrency
            run = rejudge(warehouse, url, f"bench-{time.time_ns()}", args.concurrency, args.repeat)
            report[f"rejudge_{n}"] = {**run, "bound_seconds": bound, "vs_bound": run["seconds"] / bound}
            print(json.dumps({n: report[f"rejudge_{n}"]}), flush=True)
    finally:
        server.terminate()
        server.wait()
    full, part = report[f"rejudge_{args.calls}"], report[f"rejudge_{small}"]
    report["target_vs_bound"] = TARGET
    report["met"] = full["vs_bound"] <= TARGET
    report["memory_growth_mb"] = full["peak_rss_mb"] - part["peak_rss_mb"]
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    main()
