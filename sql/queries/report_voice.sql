-- `scorelake report`: the voice panel of each run scored under $policy_id (the whole run), for its charts.
SELECT *
FROM run_voice
WHERE domain = '(all)' AND with_segments + coalesce(user_to_agent_words, 0) > 0
  AND run_id IN (SELECT run_id FROM stg_rate_counts WHERE policy_id = $policy_id)
