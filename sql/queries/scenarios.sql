-- `Warehouse.scenarios()`: one row per scenario with its signals and verdicts under one policy,
-- optionally of one run, in each run's all_metrics.json order.
SELECT *
FROM scenario_scores
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY session_started_at NULLS LAST, run_id, position
