-- Per run and domain, and the whole run (`domain = '(all)'`): the voice panel pooled over its
-- scenarios (README, "Voice"). A rate is pooled over its events (responses / user turns, yields /
-- interruptions, word errors / reference words), each stored with that event count; a duration is
-- the mean per scenario measured. Failure causes count the failed scenarios under the recorded
-- policy by cause.
WITH causes AS (
    SELECT run_id, scenario_name, failure_cause
    FROM scenario_failure_causes
    WHERE policy_name = 'recorded'
),
pooled AS (
    SELECT v.run_id, coalesce(v.domain, '(all)') AS domain,
           count(*) AS scenarios,
           count(*) FILTER (WHERE v.has_segments) AS with_segments,
           avg(v.agent_talk_s) AS agent_talk_s, avg(v.user_talk_s) AS user_talk_s,
           avg(v.overlap_s) AS overlap_s, avg(v.silence_s) AS silence_s, max(v.longest_silence_s) AS longest_silence_s,
           sum(v.agent_talk_s) / nullif(sum(v.agent_talk_s) + sum(v.user_talk_s), 0) AS agent_talk_ratio,
           sum(v.agent_barge_ins)::BIGINT AS agent_barge_ins, sum(v.user_barge_ins)::BIGINT AS user_barge_ins,
           sum(v.agent_words) / nullif(sum(v.agent_talk_s) FILTER (WHERE v.agent_words IS NOT NULL) / 60, 0)
               AS agent_wpm,
           sum(v.user_turns)::BIGINT AS user_turns, sum(v.responses)::BIGINT AS responses,
           sum(v.response_latency_s * v.responses) / nullif(sum(v.responses), 0) AS response_latency_s,
           sum(v.responses) / nullif(sum(v.user_turns), 0) AS response_rate,
           sum(v.missed_user_turns)::BIGINT AS missed_user_turns,
           sum(v.interruptions)::BIGINT AS interruptions, sum(v.yields)::BIGINT AS yields,
           sum(v.yield_latency_s * v.yields) / nullif(sum(v.yields), 0) AS yield_latency_s,
           sum(v.yields) / nullif(sum(v.interruptions), 0) AS yield_rate,
           sum(v.agent_barge_ins) FILTER (WHERE v.user_turns IS NOT NULL) / nullif(sum(v.user_turns), 0)
               AS agent_interruption_rate,
           sum(v.user_to_agent_errors)::BIGINT AS user_to_agent_errors,
           sum(v.user_to_agent_words)::BIGINT AS user_to_agent_words,
           sum(v.user_to_agent_errors) / nullif(sum(v.user_to_agent_words), 0) AS user_to_agent_wer,
           sum(v.agent_to_user_errors)::BIGINT AS agent_to_user_errors,
           sum(v.agent_to_user_words)::BIGINT AS agent_to_user_words,
           sum(v.agent_to_user_errors) / nullif(sum(v.agent_to_user_words), 0) AS agent_to_user_wer,
           sum(v.misheard_entities)::BIGINT AS misheard_entities,
           count(v.audio_s) AS with_audio, avg(v.audio_overlap_s) AS audio_overlap_s,
           avg(v.audio_drift_s) AS audio_drift_s,
           count(c.failure_cause) AS failed,
           count(*) FILTER (WHERE c.failure_cause = 'transcription') AS failed_transcription,
           count(*) FILTER (WHERE c.failure_cause = 'turn_taking') AS failed_turn_taking,
           count(*) FILTER (WHERE c.failure_cause = 'stall') AS failed_stall,
           count(*) FILTER (WHERE c.failure_cause = 'judge') AS failed_judge,
           count(*) FILTER (WHERE c.failure_cause = 'logic') AS failed_logic
    FROM scenario_voice AS v
    LEFT JOIN causes AS c USING (run_id, scenario_name)
    GROUP BY GROUPING SETS ((v.run_id, v.domain), (v.run_id))
)
SELECT * FROM pooled
