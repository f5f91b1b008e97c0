-- The rows `scorelake summary` renders: one run under one policy, in all_metrics.json order.
SELECT *
FROM scenario_scores
WHERE run_id = $run_id AND policy_id = $policy_id
ORDER BY position
