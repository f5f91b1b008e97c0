-- Audit: every voice-agent scenario where the verdict upstream stored in metrics.json differs from the one
-- scorelake recomputes under the run's own flags (the "recorded" policy), one row per signal.
-- Values are shown as text, the way the runner prints them (True / False / N/A, rates as numbers).
WITH recorded AS (
    SELECT * FROM scenario_scores WHERE policy_name = 'recorded' AND source = 'nemo'
),
compared AS (
    SELECT run_id, scenario_name, domain, 'is_action_match' AS signal,
           raw_is_action_match AS stored, is_action_match_label AS recomputed
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'db_state_match',
           CAST(raw_db_state_match AS VARCHAR), CAST(db_state_match AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'db_state_assertion',
           CAST(raw_db_state_assertion_pass_rate AS VARCHAR), CAST(db_state_assertion_pass_rate AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'nl_assertion',
           CAST(raw_nl_assertion_pass_rate AS VARCHAR), CAST(nl_assertion_pass_rate AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'judge_passed',
           CAST(raw_judge_passed AS VARCHAR), CAST(judge_passed AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'clean_exit', CAST(raw_clean_exit AS VARCHAR), CAST(clean_exit AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'insufficient_agent_turns',
           CAST(raw_stalled AS VARCHAR), CAST(stalled AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'is_successful', raw_is_successful, is_successful_label
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'is_task_successful',
           CAST(raw_is_task_successful AS VARCHAR), CAST(is_task_successful AS VARCHAR)
    FROM recorded
    UNION ALL
    SELECT run_id, scenario_name, domain, 'success_breakdown',
           CAST({'passed': raw_passed, 'failed': raw_failed, 'not_applicable': raw_not_applicable,
                 'excluded': raw_excluded} AS VARCHAR),
           CAST({'passed': passed, 'failed': failed, 'not_applicable': not_applicable,
                 'excluded': excluded} AS VARCHAR)
    FROM recorded
)
SELECT run_id, scenario_name, domain, signal, stored, recomputed
FROM compared
WHERE stored IS DISTINCT FROM recomputed
