"""Human review at scale, each phase a fresh interpreter (bench.bench.phase): importing reviews, the
review queue and a scenario page with its review forms at the store's size, and re-scoring a
replicated store with and without reviews (run on demand, not in CI).

    python bench/review.py --scenarios 100000 --reviews 100000 --rescore-rows 1000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench import INGEST, REPLICATE, SOURCE, phase  # noqa: E402

MAKE_REVIEWS = """
    # A file of reviews as a team's spreadsheet would hold them: judge_passed, is_successful and NL
    # assertions of scenarios drawn at random (seeded), by three reviewers.
    import csv, random
    import scorelake
    wh = scorelake.open({warehouse!r})
    rows = wh.sql("SELECT run_id, scenario_name, nl_total FROM scenario_scores WHERE policy_name = 'recorded'")
    rng = random.Random(7)
    picks = rng.sample(range(rows.height), min({reviews}, rows.height))
    with open({file!r}, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["run_id", "scenario_name", "signal", "assertion", "verdict", "reviewer", "note"])
        for i in picks:
            run, scenario, nl = rows.row(i)
            signal = ("judge_passed", "is_successful", "nl_assertion")[i % 3] if nl else ("judge_passed", "is_successful")[i % 2]
            out.writerow([run, scenario, signal, 1 if signal == "nl_assertion" else "", rng.choice(["pass", "fail"]),
                          rng.choice(["alice", "bob", "carol"]), "checked against the transcript"])
    result["reviews"] = len(picks)
"""

IMPORT = """
    import scorelake
    wh = scorelake.open({warehouse!r})
    start = time.perf_counter()
    result["stored"] = wh.import_reviews({file!r}).stored
"""

QUEUE_PAGES = """
    # The viewer in review mode, through its ASGI app in this process: each page timed once after a
    # warm-up (median of five), in milliseconds.
    import scorelake
    from starlette.testclient import TestClient
    from scorelake.web import make_app
    wh = scorelake.open({warehouse!r})
    run = wh.runs()["run_id"][-1]
    scenario = wh.run_scenarios(run, limit=1)["scenario_name"][0]
    pages = {{"queue_errors": "/review?token=t&pick=errors", "queue_sample": "/review?token=t&pick=sample&seed=3",
              "queue_sample_one_run": f"/review?token=t&pick=sample&run={{run}}",
              "queue_reviewers_disagree": "/review?token=t&pick=reviewers",
              "scenario_with_forms": f"/runs/{{run}}/scenarios/{{scenario}}?token=t",
              "runs": "/?token=t", "run": f"/runs/{{run}}?token=t", "run_failed_only": f"/runs/{{run}}?token=t&failed=1",
              "judge_scores": f"/runs/{{run}}/judge?token=t"}}
    client = TestClient(make_app(wh, "t", review=True))
    start = time.perf_counter()
    for name, path in pages.items():
        assert client.get(path).status_code == 200
        times = []
        for _ in range(5):
            began = time.perf_counter()
            client.get(path)
            times.append(time.perf_counter() - began)
        result[f"{{name}}_ms"] = sorted(times)[2] * 1000
"""

RESCORE = """
    from scorelake.flows.flow_bodies import InProcess, rescore_policies
    from scorelake.transforms.scoring import Policy
    policy = Policy(name="bench-{tag}", judge_threshold={threshold}, reviews={takes_reviews})
    start = time.perf_counter()
    report = rescore_policies(InProcess(), warehouse={warehouse!r}, policy_specs=[policy.spec_json()])
    result["scenarios"] = report.scored[policy.name]
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", type=int, default=100_000)
    parser.add_argument("--reviews", type=int, default=100_000)
    parser.add_argument("--rescore-rows", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/scorelake-bench-review"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "review.json")
    args = parser.parse_args()
    from bench.synth import build_store

    args.work.mkdir(parents=True, exist_ok=True)
    store, warehouse, file = args.work / "store", args.work / "warehouse", args.work / "reviews.csv"
    build_store(SOURCE, store, args.scenarios)
    subprocess.run(["rm", "-rf", str(warehouse)], check=True)
    fmt = {"store": str(store), "warehouse": str(warehouse), "file": str(file), "reviews": args.reviews,
           "rows": args.rescore_rows}
    results: dict = {"scenarios": args.scenarios}
    save = lambda: args.out.write_text(json.dumps(results, indent=2))  # noqa: E731
    results["ingest"] = phase(INGEST.format(**fmt))
    results["make_reviews"] = phase(MAKE_REVIEWS.format(**fmt))
    results["import_reviews"] = phase(IMPORT.format(**fmt))
    results["queue_pages"] = phase(QUEUE_PAGES.format(**fmt))
    save()
    if args.rescore_rows:
        results["replicate"] = phase(REPLICATE.format(**fmt))
        phase(RESCORE.format(**fmt, tag="warm", threshold=0.6, takes_reviews=False))  # the page cache warmed
        for round_, threshold in ((1, 0.7), (2, 0.65)):  # interleaved, twice: the machine is noisy
            for reviews in (False, True):
                key = f"rescore_{'with' if reviews else 'without'}_reviews_{round_}"
                results[key] = phase(RESCORE.format(**fmt, tag=key, threshold=threshold, takes_reviews=reviews))
                save()
        best = lambda kind: min(results[f"rescore_{kind}_reviews_{r}"]["seconds"] for r in (1, 2))  # noqa: E731
        results["rescore_reviews_ratio"] = best("with") / best("without")
    save()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
