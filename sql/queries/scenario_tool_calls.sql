-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): a scenario's tool calls, agent side first, each side in order.
SELECT run_id, scenario_name, side, ordinal, message_index, replies_to_turn, call_id, name, arguments_json, result, requestor
FROM tool_calls
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
ORDER BY run_id, scenario_name, side, ordinal
