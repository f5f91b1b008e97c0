-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): what the scenario asked of the agent (the user simulator's instructions)
-- and where they were read.
SELECT run_id, scenario_name, instructions, origin
FROM stg_tasks
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
