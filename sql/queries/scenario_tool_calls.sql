-- `Warehouse.evidence()`: a scenario's tool calls, agent side first, each side in order.
SELECT side, ordinal, message_index, replies_to_turn, call_id, name, arguments_json, result, requestor
FROM tool_calls
WHERE run_id = $run_id AND scenario_name = $scenario
ORDER BY side, ordinal
