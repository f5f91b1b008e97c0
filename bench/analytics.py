"""Analytics at a store's size, timed as the user feels them: each command a whole process
(``python -m scorelake ...``), one warm-up, then the median of five (run on demand, not in CI).

    python bench/analytics.py --scenarios 100000 --baseline 12abd2c
    python bench/analytics.py --scenarios 100000 --voice-only --out bench/voice.json

- ``latency`` (by domain and by scenario) against ``rates`` on the same warehouse, and the voice
  panel (``voice``, by domain and by scenario) against ``latency``;
- searching every run's transcripts, judge reasons and tool calls for a phrase (``show --grep`` and
  the viewer's query);
- ``compare`` and ``gate`` of a run against a re-run of it (the store's first session copied, the
  same scenarios: every one paired) against the ``compare`` of ``--baseline``, the commit before
  like-with-like comparison, on a warehouse that commit ingested from the same store.

``--voice-only``: the voice panel against ``latency`` (and ``rates``) alone, no baseline ingested.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench import SOURCE  # noqa: E402

RERUN = "eval_20991231_000000"  # the copy of the first session: the candidate compared with it
ROUNDS = 5


def timed(command: list[str], env: dict | None = None) -> dict:
    """Median wall time of ``command`` over ``ROUNDS`` runs after one warm-up (its exit code checked)."""
    def once() -> float:
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode not in (0, 3):  # 3: the gate found a regression, an answer too
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
        return time.perf_counter() - began

    once()
    times = [once() for _ in range(ROUNDS)]
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


SEARCHED = "ORD-54321"  # in the transcripts of one template scenario: found in every two-hundredth


def search_queries(warehouse: Path, run: str) -> dict:
    """The search the viewer runs, in this process (the median of five after a warm-up, in ms):
    across every run (`/search`), and one run's page filtered by the phrase (`/runs/RUN?q=`)."""
    code = f"""
import json, statistics, time
import scorelake
wh = scorelake.open({str(warehouse)!r})
def timed(fn):
    fn()
    times = []
    for _ in range(5):
        began = time.perf_counter()
        fn()
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)
print(json.dumps({{"every_run_ms": timed(lambda: wh.search({SEARCHED!r}, limit=200)),
                  "found": wh.search({SEARCHED!r}, limit=200).height,
                  "one_run_page_ms": timed(lambda: wh.run_scenarios({run!r}, q={SEARCHED!r}))}}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline_package(commit: str, work: Path) -> Path:
    """``commit``'s scorelake as an importable folder (its package-dir mapping laid out), for PYTHONPATH."""
    source, target = work / "baseline-src", work / "baseline-pkg"
    for path in (source, target):
        shutil.rmtree(path, ignore_errors=True)
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    shutil.copytree(source / "scorelake", target / "scorelake")
    for part in ("flows", "transforms", "sql"):
        shutil.copytree(source / part, target / "scorelake" / part)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=100_000)
    parser.add_argument("--baseline", default="12abd2c", help="The commit whose compare is the reference")
    parser.add_argument("--work", type=Path, default=Path("/tmp/scorelake-bench-analytics"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "analytics.json")
    parser.add_argument("--voice-only", action="store_true", help="Time the voice panel against latency alone")
    args = parser.parse_args()
    from bench.synth import build_store

    args.work.mkdir(parents=True, exist_ok=True)
    store, current, old = args.work / "store", args.work / "warehouse", args.work / "warehouse-baseline"
    build_store(SOURCE, store, args.scenarios)
    first = sorted(p for p in store.iterdir() if p.is_dir())[0]
    shutil.copytree(first, store / RERUN)
    cli = [sys.executable, "-m", "scorelake"]
    here = {**os.environ, "PYTHONPATH": str(REPO)}
    there = None if args.voice_only else {**os.environ, "PYTHONPATH": str(baseline_package(args.baseline, args.work))}
    for warehouse, env in ((current, here),) if args.voice_only else ((current, here), (old, there)):
        shutil.rmtree(warehouse, ignore_errors=True)
        subprocess.run([*cli, "ingest", str(store), "-w", str(warehouse)], env=env, check=True, capture_output=True)
    pair = [first.name, RERUN]
    results: dict = {"scenarios": args.scenarios + len(list(first.iterdir())), "compared": pair,
                     **({} if args.voice_only else {"baseline_commit": args.baseline})}
    voice = (("rates", ["rates"], here), ("latency", ["latency"], here),
             ("latency_by_scenario", ["latency", "--by", "scenario"], here),
             ("voice", ["voice"], here), ("voice_by_scenario", ["voice", "--by", "scenario"], here))
    for name, command, env in voice if args.voice_only else (
            *voice, ("compare", ["compare", *pair], here), ("gate", ["gate", *pair], here),
            ("compare_baseline", ["compare", *pair], there),
            ("search_every_run", ["show", "--grep", SEARCHED], here)):
        warehouse = old if env is there else current
        results[name] = timed([*cli, *command, "-w", str(warehouse), "--format", "json"]
                              if name != "gate" else [*cli, *command, "-w", str(warehouse)], env)
        print(name, results[name], flush=True)
    median = lambda name: results[name]["median_s"]  # noqa: E731
    results["ratios"] = {"latency_vs_rates": median("latency") / median("rates"),
                         "latency_by_scenario_vs_rates": median("latency_by_scenario") / median("rates"),
                         "voice_vs_latency": median("voice") / median("latency"),
                         "voice_by_scenario_vs_latency_by_scenario":
                             median("voice_by_scenario") / median("latency_by_scenario")}
    if not args.voice_only:
        results["search_queries"] = search_queries(current, first.name)
        print("search_queries", results["search_queries"], flush=True)
        results["ratios"] |= {"compare_vs_baseline_compare": median("compare") / median("compare_baseline"),
                              "gate_vs_baseline_compare": median("gate") / median("compare_baseline")}
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results["ratios"], indent=2))


if __name__ == "__main__":
    main()
