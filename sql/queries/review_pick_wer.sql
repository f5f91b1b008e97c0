-- the scenarios whose agent heard some of the user's words otherwise, the most first (`weight`).
SELECT s.run_id, s.scenario_name,
       format('the agent heard {:.1f}% of the user''s words otherwise ({} of {} words in the turns it heard)', 100 * v.user_to_agent_wer, v.user_to_agent_errors, v.user_to_agent_words) AS reason,
       true AS gated, v.user_to_agent_wer AS weight
FROM scope AS s
JOIN scenario_voice AS v USING (run_id, scenario_name)
WHERE v.user_to_agent_wer > 0
