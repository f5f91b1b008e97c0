-- `Warehouse.evidence()`: what the scenario's judge was asked (judge_result.json's judge_input): the
-- system prompt, the user content and the NL assertions numbered in the request.
SELECT system_prompt, user_content, nl_assertions
FROM stg_judge_inputs
WHERE run_id = $run_id AND scenario_name = $scenario
