-- Per run and policy, one row per signal: its pass rate over its own denominator and unit
-- (scenarios, predicates or assertions) with a Wilson 95% interval. Stalled scenarios are skipped,
-- as in all_summary.txt; a signal no scenario of the run had is absent, as its summary line is.
WITH per_signal AS (
    SELECT run_id, policy_id, policy_name, judge, unnest([
        {'signal_order': 1, 'signal': 'is_action_match', 'unit': 'scenarios',
         'passed': action_match_passed, 'total': action_match_total},
        {'signal_order': 2, 'signal': 'db_state_match', 'unit': 'scenarios',
         'passed': db_state_match_passed, 'total': db_state_match_total},
        {'signal_order': 3, 'signal': 'db_state_assertion', 'unit': 'predicates',
         'passed': db_state_assertion_passed, 'total': db_state_assertion_total},
        {'signal_order': 4, 'signal': 'nl_assertion', 'unit': 'assertions',
         'passed': nl_assertion_passed, 'total': nl_assertion_total},
        {'signal_order': 5, 'signal': 'judge_passed', 'unit': 'scenarios',
         'passed': judge_passed_passed, 'total': judge_passed_total},
        {'signal_order': 6, 'signal': 'clean_exit', 'unit': 'scenarios',
         'passed': clean_exit_passed, 'total': clean_exit_total},
        -- tau2 only: voice-agent runs have no communicate checks, so no row
        {'signal_order': 7, 'signal': 'communicate', 'unit': 'scenarios',
         'passed': communicate_passed, 'total': communicate_total}
    ], recursive := true)
    FROM rate_rollup
    WHERE domain = '(all)'
)
SELECT run_id, policy_id, policy_name, judge, signal, unit, passed, total, passed / total AS rate,
       wilson_low(passed, total) AS ci_low, wilson_high(passed, total) AS ci_high, signal_order
FROM per_signal
WHERE total > 0
