-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): what the agent heard of each user
-- turn, the turns aligned, with the turns it never heard.
SELECT run_id, scenario_name, heard_json, user_to_agent_turns_missing, user_to_agent_turns_duplicated,
       user_to_agent_turns_undelivered, user_to_agent_turns_extra, user_to_agent_wer
FROM stg_voice
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name) AND heard_json IS NOT NULL
