-- `scorelake report`: the voice panel of each run scored under $policy_id (the whole run), for its charts.
SELECT run_id, scenarios, with_segments, agent_talk_ratio, overlap_s, response_rate, user_turns, missed_user_turns,
       user_to_agent_wer, user_to_agent_words, agent_to_user_wer, misheard_entities, failed, COLUMNS('^failed_')
FROM run_voice
WHERE domain = '(all)' AND with_segments + coalesce(user_to_agent_words, 0) > 0
  AND run_id IN (SELECT run_id FROM stg_rate_counts WHERE policy_id = $policy_id)
