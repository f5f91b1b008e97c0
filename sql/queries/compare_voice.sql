-- `scorelake compare` and `gate`: each scenario's overlap and what the agent heard in the two runs
-- (NULL where nothing measured them), to compare the runs' voice per domain.
SELECT run_id, scenario_name, domain, overlap_s, user_to_agent_errors, user_to_agent_words,
       user_to_agent_turns_missing
FROM scenario_voice
WHERE run_id IN ($run_a, $run_b)
ORDER BY run_id, position
