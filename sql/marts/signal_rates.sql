-- Per run and policy, one row per signal: its pass rate over its own denominator and unit
-- (scenarios, predicates or assertions) with a Wilson 95% interval. Stalled scenarios are skipped,
-- as in all_summary.txt; a signal no scenario of the run had is absent, as its summary line is.
WITH per_signal AS (
    SELECT run_id, policy_id, 1 AS signal_order, 'is_action_match' AS signal, 'scenarios' AS unit,
           action_match_passed AS passed, action_match_total AS total
    FROM rate_rollup WHERE domain = '(all)'
    UNION ALL
    SELECT run_id, policy_id, 2, 'db_state_match', 'scenarios', db_state_match_passed, db_state_match_total
    FROM rate_rollup WHERE domain = '(all)'
    UNION ALL
    SELECT run_id, policy_id, 3, 'db_state_assertion', 'predicates', db_state_assertion_passed, db_state_assertion_total
    FROM rate_rollup WHERE domain = '(all)'
    UNION ALL
    SELECT run_id, policy_id, 4, 'nl_assertion', 'assertions', nl_assertion_passed, nl_assertion_total
    FROM rate_rollup WHERE domain = '(all)'
    UNION ALL
    SELECT run_id, policy_id, 5, 'judge_passed', 'scenarios', judge_passed_passed, judge_passed_total
    FROM rate_rollup WHERE domain = '(all)'
    UNION ALL
    SELECT run_id, policy_id, 6, 'clean_exit', 'scenarios', clean_exit_passed, clean_exit_total
    FROM rate_rollup WHERE domain = '(all)'
)
SELECT run_id, policy_id, signal, unit, passed, total, passed / total AS rate,
       wilson_low(passed, total) AS ci_low, wilson_high(passed, total) AS ci_high, signal_order
FROM per_signal
WHERE total > 0
