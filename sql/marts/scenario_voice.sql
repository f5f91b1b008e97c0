-- depends on: stg_scenarios, stg_voice
-- One row per run and scenario: the voice panel (docs/guide/voice.md). Turn-taking from
-- conversation_log.seglst.json (NULL where the file is absent or holds no segment, never zero), each
-- direction's word error rate from the two bots' LLM contexts (NULL where a context is empty or
-- absent), the key entities the user said that the agent did not hear as said, and the speech as
-- conversation_log.wav has it (NULL without a recording).
SELECT s.run_id, s.scenario_name, s.domain, s.position,
       {{ voice_metrics }}  -- each declared voice metric (transforms/columns.py VOICE_METRICS)
FROM stg_scenarios AS s
LEFT JOIN stg_voice AS v USING (run_id, generation, scenario_name)
