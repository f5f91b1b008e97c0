-- the scenarios with turns one side never heard, the most first (`weight`).
SELECT s.run_id, s.scenario_name,
       format('{} user turns the agent never heard, {} agent turns the user never heard', coalesce(v.user_to_agent_turns_missing, 0), coalesce(v.agent_to_user_turns_missing, 0)) AS reason,
       true AS gated, coalesce(v.user_to_agent_turns_missing, 0) + coalesce(v.agent_to_user_turns_missing, 0) AS weight
FROM scope AS s
JOIN scenario_voice AS v USING (run_id, scenario_name)
WHERE coalesce(v.user_to_agent_turns_missing, 0) + coalesce(v.agent_to_user_turns_missing, 0) > 0
