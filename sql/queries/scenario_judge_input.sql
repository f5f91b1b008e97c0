-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): what the scenario's judge was asked (judge_result.json's judge_input): the
-- system prompt, the user content and the NL assertions numbered in the request.
SELECT run_id, scenario_name, system_prompt, user_content, nl_assertions
FROM stg_judge_inputs
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
