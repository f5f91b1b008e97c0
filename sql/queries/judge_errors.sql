-- `Warehouse.judge_errors()`: the scenarios whose judge failed, under one policy, optionally of one run.
SELECT run_id, judge, scenario_name, domain, reason, is_successful, failed, judge_only
FROM judge_errors
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, scenario_name
