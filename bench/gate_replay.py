"""How often the gate fails a run that did not change: a stored run replayed against itself.

Each replay resamples the run's scenarios (with replacement, within each domain) and scores them
twice, as two runs of the same agent would be: each scenario's success flips, in each of the two,
with its judge's flip rate (from ``rejudge --repeat``: the share of asks that disagree with the
majority) where the judge gates its success. The gate (``analysis.gate_tests``, corrected as
``scorelake gate`` corrects it, at ``--max-drop 0``) then compares the two; the share of replays it
fails is its false-alarm rate, which must stay at most its alpha::

    python bench/gate_replay.py --warehouse W --run eval_... --judge replay --replays 1000
    python bench/gate_replay.py --warehouse W --run eval_... --noisy-judge --replays 1000
    python bench/gate_replay.py --synthetic --replays 1000     # 8 domains of 60 scenarios

``--noisy-judge`` first asks the run's stored judge inputs again, five times each, of a scripted
judge (tests/judge_server.py) whose asks pass with a chance of each scenario's own (drawn from its
input: most near 0 or 1, some in between), as the judge ``noisy``, and takes the flips from there.

Writes bench/gate_replay.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def replay_failures(scenarios: list[tuple[str, bool, float]], replays: int, alpha: float, correction: str,
                    seed: int) -> int:
    """Of ``replays`` replays of ``scenarios`` (domain, success, the chance a judge flips it), how
    many the gate fails."""
    import polars as pl

    from scorelake.transforms.analysis import gate_tests, mcnemar_exact

    chance = random.Random(seed)
    by_domain: dict[str, list[tuple[bool, float]]] = {}
    for domain, success, flip in scenarios:
        by_domain.setdefault(domain, []).append((success, flip))
    failures = 0
    for _ in range(replays):
        rows, total_broken, total_fixed, total = [], 0, 0, 0
        for domain, members in sorted(by_domain.items()):
            broken = fixed = 0
            for _ in members:
                success, flip = members[chance.randrange(len(members))]
                a = success != (chance.random() < flip)
                b = success != (chance.random() < flip)
                broken += a and not b
                fixed += b and not a
            rows.append({"domain": domain, "pairs": len(members), "broken": broken, "fixed": fixed,
                         "p_value": mcnemar_exact(broken, fixed).p_value})
            total_broken, total_fixed, total = total_broken + broken, total_fixed + fixed, total + len(members)
        rows.append({"domain": "(all)", "pairs": total, "broken": total_broken, "fixed": total_fixed,
                     "p_value": mcnemar_exact(total_broken, total_fixed).p_value})
        failures += gate_tests(pl.DataFrame(rows), alpha, correction)["regressed"].any()
    return failures


def false_alarms(domains: int = 8, scenarios_per_domain: int = 60, flip_rate: float = 0.1, replays: int = 1000,
                 alpha: float = 0.05, seed: int = 0, correction: str = "holm") -> float:
    """The gate's false-alarm rate on a synthetic run: ``domains`` of ``scenarios_per_domain``
    scenarios, each passing with a chance of its own, its judge flipping it with ``flip_rate``."""
    chance = random.Random(seed)
    scenarios = [(f"d{d}", chance.random() < 0.6, flip_rate)
                 for d in range(domains) for _ in range(scenarios_per_domain)]
    return replay_failures(scenarios, replays, alpha, correction, seed) / replays


def stored_scenarios(warehouse: str, run: str, judge: str, policy: str) -> list[tuple[str, bool, float]]:
    """A stored run's scenarios: domain, success under ``policy``, and the flip rate of ``judge``'s
    asks where JUDGE_PASSED gates success (0 elsewhere, and where the judge was asked once)."""
    import scorelake

    wh = scorelake.open(warehouse)
    rows = wh.sql(f"""
        SELECT s.domain, s.is_successful, coalesce(j.flip_rate, 0) AS flip_rate,
               list_contains(s.success_signals, 'judge_passed') AS judged
        FROM scenario_scores AS s JOIN stg_policies AS p USING (policy_id)
        LEFT JOIN judge_stability AS j ON j.judge = '{judge}' AND j.run_id = s.run_id
                                      AND j.scenario_name = s.scenario_name
        WHERE p.name = '{policy}' AND s.run_id = '{run}' AND s.is_successful IS NOT NULL""")
    return [(r["domain"], r["is_successful"], r["flip_rate"] if r["judged"] else 0.0)
            for r in rows.iter_rows(named=True)]


def _noisy(payload: dict, _: int):
    """A judge unsure to a degree of each scenario's own: an ask passes with a chance drawn from the
    input's hash (cubed towards 0 or 1), its coin drawn from the input and the ask's seed."""
    import hashlib

    from tests.judge_server import Reply, user_content

    def unit(text: str) -> float:
        return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16 ** 12

    content = user_content(payload)
    u = unit(content)
    lean = u ** 3 if u < 0.5 else 1 - (1 - u) ** 3
    passed = unit(f"{content}|{payload.get('seed')}") < lean
    return Reply(content=json.dumps({"score": 0.95 if passed else 0.05, "reason": "scripted"}))


def ask_noisy_judge(warehouse: str, run: str) -> None:
    import scorelake
    from tests.judge_server import JudgeServer

    with JudgeServer(_noisy) as server:
        scorelake.open(warehouse).rejudge("noisy", url=server.url, model="noisy", repeat=5, runs=[run],
                                          concurrency=16, retries=0, prefect=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse")
    parser.add_argument("--run")
    parser.add_argument("--judge", help="the repeated judge whose asks' flips are the noise")
    parser.add_argument("--policy", default="recorded")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--noisy-judge", action="store_true", help="ask the scripted noisy judge first")
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--correction", default="holm")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "gate_replay.json")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    if args.synthetic:
        chance = random.Random(0)
        scenarios = [(f"d{d}", chance.random() < 0.6, 0.1) for d in range(8) for _ in range(60)]
    else:
        if args.noisy_judge:
            ask_noisy_judge(args.warehouse, args.run)
            args.judge = "noisy"
        scenarios = stored_scenarios(args.warehouse, args.run, args.judge, args.policy)
    failed = replay_failures(scenarios, args.replays, args.alpha, args.correction, seed=1)
    result = {"scenarios": len(scenarios), "domains": len({d for d, _, _ in scenarios}), "replays": args.replays,
              "alpha": args.alpha, "correction": args.correction, "failed": failed,
              "false_alarm_rate": failed / args.replays,
              "mean_flip_rate": sum(f for _, _, f in scenarios) / max(len(scenarios), 1),
              "source": "synthetic" if args.synthetic else f"{args.run} ({args.judge})"}
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
