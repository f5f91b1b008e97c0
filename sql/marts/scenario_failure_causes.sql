-- depends on: judge_errors, scenario_scores, scenario_voice, stg_verdicts
-- Per failed scenario and policy: every cause that holds (`failure_causes`, in the declared order),
-- the first of them its primary cause (`failure_cause`) with its evidence, and each one's evidence
-- (`causes_evidence`). The causes, their conditions and their order are declared once, in
-- transforms/columns.py FAILURE_CAUSES (docs/guide/voice.md): harness, judge, dead_air, transcription,
-- turn_taking, stall; logic where none of them holds.
WITH db_errors AS (  -- the failing DB predicates of each scenario, and how many of them errored
    SELECT run_id, scenario_name, count(*) AS db_failing, count(error) AS db_errored,
           string_agg(DISTINCT error, '; ') AS db_error
    FROM stg_verdicts
    WHERE kind = 'db_state_assertion' AND NOT passed
    GROUP BY run_id, scenario_name
),
facts AS (
    SELECT sc.run_id, sc.scenario_name, sc.domain, sc.policy_id, sc.policy_name, sc.failed, sc.stalled,
           sc.agent_turns, sc.min_agent_turns, sc.stop_reason,
           sc.total_turns = 0 AND coalesce(sc.agent_n_calls, 0) = 0 AND coalesce(sc.user_n_calls, 0) = 0 AS nothing_ran,
           coalesce(je.judge_only, false) AS judge_only, je.reason AS judge_reason,
           len(sc.failed) > 0 AND list_has_all(['db_state_assertion'], sc.failed)
               AND d.db_failing > 0 AND d.db_errored = d.db_failing AS harness_only, d.db_error,
           v.call_end, v.trailing_silence_s, v.misheard_acted_on, v.misheard_json, v.missed_user_turns,
           v.longest_silence_s, v.agent_barge_ins, v.user_open_at_end_s
    FROM scenario_scores AS sc
    LEFT JOIN judge_errors AS je USING (run_id, policy_id, scenario_name)
    LEFT JOIN db_errors AS d USING (run_id, scenario_name)
    LEFT JOIN scenario_voice AS v USING (run_id, scenario_name)
    WHERE sc.is_successful = false
),
held AS (
    SELECT *, {{ failure_causes_held }} AS failure_causes
    FROM facts
),
evidenced AS (
    SELECT *, {{ failure_cause_evidence }} AS causes_evidence
    FROM held
)
SELECT run_id, scenario_name, domain, policy_id, policy_name, failure_causes,
       failure_causes[1] AS failure_cause, causes_evidence[1] AS evidence, causes_evidence
FROM evidenced
