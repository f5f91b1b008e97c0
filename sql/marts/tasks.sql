-- depends on: stg_tasks
-- What each scenario asked of the agent: the user simulator's instructions (NeMo's
-- scenario_config/user_prompt.txt; a tau2 task's user scenario; a tau-bench task's instruction).
SELECT run_id, scenario_name, instructions, origin
FROM stg_tasks
