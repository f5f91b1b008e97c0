-- `Warehouse.evidence()`: what the scenario asked of the agent (the user simulator's instructions)
-- and where they were read.
SELECT instructions, origin
FROM stg_tasks
WHERE run_id = $run_id AND scenario_name = $scenario
