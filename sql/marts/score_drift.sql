-- depends on: scenario_scores
-- Audit: every voice-agent scenario where the verdict upstream stored in metrics.json differs from
-- the one scorelake recomputes under the run's own flags (the "recorded" policy), one row per signal.
-- Values are shown as text, the way the runner prints them (True / False / N/A, rates as numbers).
WITH compared AS (
    SELECT run_id, scenario_name, domain, unnest([
        {'signal': 'is_action_match', 'stored': raw_is_action_match, 'recomputed': is_action_match_label},
        {'signal': 'db_state_match', 'stored': CAST(raw_db_state_match AS VARCHAR),
         'recomputed': CAST(db_state_match AS VARCHAR)},
        {'signal': 'db_state_assertion', 'stored': CAST(raw_db_state_assertion_pass_rate AS VARCHAR),
         'recomputed': CAST(db_state_assertion_pass_rate AS VARCHAR)},
        {'signal': 'nl_assertion', 'stored': CAST(raw_nl_assertion_pass_rate AS VARCHAR),
         'recomputed': CAST(nl_assertion_pass_rate AS VARCHAR)},
        {'signal': 'judge_passed', 'stored': CAST(raw_judge_passed AS VARCHAR),
         'recomputed': CAST(judge_passed AS VARCHAR)},
        {'signal': 'clean_exit', 'stored': CAST(raw_clean_exit AS VARCHAR), 'recomputed': CAST(clean_exit AS VARCHAR)},
        {'signal': 'insufficient_agent_turns', 'stored': CAST(raw_stalled AS VARCHAR),
         'recomputed': CAST(stalled AS VARCHAR)},
        {'signal': 'is_successful', 'stored': raw_is_successful, 'recomputed': is_successful_label},
        {'signal': 'is_task_successful', 'stored': CAST(raw_is_task_successful AS VARCHAR),
         'recomputed': CAST(is_task_successful AS VARCHAR)},
        {'signal': 'success_breakdown',
         'stored': CAST({'passed': raw_passed, 'failed': raw_failed, 'not_applicable': raw_not_applicable,
                         'excluded': raw_excluded} AS VARCHAR),
         'recomputed': CAST({'passed': passed, 'failed': failed, 'not_applicable': not_applicable,
                             'excluded': excluded} AS VARCHAR)}
    ], recursive := true)
    FROM scenario_scores
    WHERE policy_name = 'recorded' AND source = 'nemo'
)
SELECT run_id, scenario_name, domain, signal, stored, recomputed
FROM compared
WHERE stored IS DISTINCT FROM recomputed
