-- Per run and policy, one row per signal: its pass rate over its own denominator and unit
-- (scenarios, predicates or assertions). Stalled scenarios are skipped, as in all_summary.txt;
-- signals no scenario of the run had are absent, as their summary lines are.
WITH per_signal AS (
    SELECT run_id, policy_id, 1 AS ord, 'is_action_match' AS signal, 'scenarios' AS unit,
           count(*) FILTER (WHERE is_action_match) AS passed, count(is_action_match) AS total
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
    UNION ALL
    SELECT run_id, policy_id, 2, 'db_state_match', 'scenarios',
           count(*) FILTER (WHERE db_state_match), count(db_state_match)
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
    UNION ALL
    SELECT run_id, policy_id, 3, 'db_state_assertion', 'predicates',
           coalesce(sum(dbsa_passed), 0), coalesce(sum(dbsa_total), 0)
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
    UNION ALL
    SELECT run_id, policy_id, 4, 'nl_assertion', 'assertions',
           coalesce(sum(nl_passed), 0), coalesce(sum(nl_total), 0)
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
    UNION ALL
    SELECT run_id, policy_id, 5, 'judge_passed', 'scenarios',
           count(*) FILTER (WHERE judge_passed), count(judge_passed)
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
    UNION ALL
    SELECT run_id, policy_id, 6, 'clean_exit', 'scenarios',
           count(*) FILTER (WHERE clean_exit), count(clean_exit)
    FROM scenario_scores WHERE NOT stalled GROUP BY ALL
)
SELECT run_id, policy_id, signal, unit, passed, total, passed / total AS rate, ord AS signal_order
FROM per_signal
WHERE total > 0
