-- depends on: stg_judge_results
-- The LLM judge's own result per scenario (judge_result.json): score, reason, `errored` when the
-- judge failed rather than the agent (upstream scored it 0.0 all the same), and every extra key it
-- returned (extra_json: confidence, deductions, ...).
SELECT run_id, scenario_name, score, reason, errored, extra_json
FROM stg_judge_results
