-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): a scenario's conversation, in order.
SELECT run_id, scenario_name, ordinal, role, text, timestamp, latency_ms
FROM turns
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
ORDER BY run_id, scenario_name, ordinal
