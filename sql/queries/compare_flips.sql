-- `scorelake compare`: scenarios of both runs with a composite verdict in each.
SELECT scenario_name, domain, is_successful_a, is_successful_b, flip
FROM run_diff
WHERE policy_id = $policy_id AND run_a = $run_a AND run_b = $run_b
  AND is_successful_a IS NOT NULL AND is_successful_b IS NOT NULL
ORDER BY domain, scenario_name
