-- depends on: scenario_failure_causes, scenario_latency, scenario_voice
-- Per run and domain, and the whole run (`domain = '(all)'`): the voice panel pooled over its
-- scenarios (docs/guide/voice.md). A rate is pooled over its events (responses / user turns, yields /
-- interruptions, word errors / reference words), each stored with that event count; a duration is
-- the mean per scenario measured. Failure causes count the failed scenarios under the recorded
-- policy by their primary cause.
WITH causes AS (
    SELECT run_id, scenario_name, failure_cause
    FROM scenario_failure_causes
    WHERE policy_name = 'recorded'
),
pooled AS (
    SELECT v.run_id, coalesce(v.domain, '(all)') AS domain,
           count(*) AS scenarios,
           count(*) FILTER (WHERE v.has_segments) AS with_segments,
           count(v.audio_s) AS with_audio,
           -- each declared voice metric that rolls up (transforms/columns.py VOICE_METRICS)
           {{ voice_rollups }},
           -- the runner's own count beside the barge-ins: agent turns it logged [INTERRUPTED]
           sum(l.interrupted)::BIGINT AS interrupted_turns,
           count(c.failure_cause) AS failed,
           -- the failed scenarios by primary cause (transforms/columns.py FAILURE_CAUSES)
           {{ failure_cause_counts }}
    FROM scenario_voice AS v
    LEFT JOIN causes AS c USING (run_id, scenario_name)
    LEFT JOIN scenario_latency AS l USING (run_id, scenario_name)
    GROUP BY GROUPING SETS ((v.run_id, v.domain), (v.run_id))
)
SELECT * FROM pooled
