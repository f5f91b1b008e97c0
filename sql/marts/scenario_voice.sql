-- One row per run and scenario: the voice panel (README, "Voice"). Turn-taking from
-- conversation_log.seglst.json (NULL where the file is absent or holds no segment, never zero), each
-- direction's word error rate from the two bots' LLM contexts (NULL where a context is empty or
-- absent), the key entities the user said that the agent did not hear as said, and the speech as
-- conversation_log.wav has it (NULL without a recording).
SELECT s.run_id, s.scenario_name, s.domain, s.position,
       v.has_segments,
       v.agent_talk_s, v.user_talk_s, v.overlap_s, v.silence_s, v.longest_silence_s, v.agent_talk_ratio,
       v.agent_barge_ins, v.user_barge_ins, v.agent_words, v.agent_wpm,
       v.user_turns, v.responses, v.response_latency_s, v.response_rate, v.missed_user_turns,
       v.interruptions, v.yields, v.yield_latency_s, v.yield_rate, v.agent_interruption_rate,
       v.user_to_agent_errors, v.user_to_agent_words, v.user_to_agent_wer,
       v.agent_to_user_errors, v.agent_to_user_words, v.agent_to_user_wer,
       v.misheard_entities, v.misheard_acted_on, v.misheard_json,
       v.audio_s, v.audio_agent_talk_s, v.audio_user_talk_s, v.audio_overlap_s, v.audio_silence_s,
       v.audio_first_speech_s, v.audio_first_agent_s, v.audio_drift_s
FROM stg_scenarios AS s
LEFT JOIN stg_voice AS v USING (run_id, generation, scenario_name)
