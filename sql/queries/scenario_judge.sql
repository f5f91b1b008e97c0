-- `Warehouse.evidence()`: the judge's own result for a scenario.
SELECT score, reason, errored, extra_json
FROM judge_results
WHERE run_id = $run_id AND scenario_name = $scenario
