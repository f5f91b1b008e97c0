-- `Warehouse.evidence()`: one scenario of one run under one policy, every column of scenario_scores.
SELECT *
FROM scenario_scores
WHERE run_id = $run_id AND scenario_name = $scenario AND policy_id = $policy_id
