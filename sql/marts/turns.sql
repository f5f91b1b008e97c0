-- depends on: stg_turns
-- The conversation of every scenario, turn by turn (metrics.json turns; a tau2 / tau-bench
-- simulation's messages), each agent turn that answered a user with its response latency.
SELECT run_id, scenario_name, ordinal, role, text, timestamp, latency_ms
FROM stg_turns
