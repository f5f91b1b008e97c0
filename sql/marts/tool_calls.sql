-- depends on: stg_tool_calls
-- Every tool call of every scenario, in order, with its arguments and what the tool returned:
-- bot_logs_agent/ and bot_logs_user/ llm_context.json (side agent / user), or a simulation's messages.
-- `replies_to_turn`: the other party's turn it answers (its place in the transcript).
SELECT run_id, scenario_name, side, ordinal, message_index, replies_to_turn, call_id, name, arguments_json, result,
       requestor
FROM stg_tool_calls
