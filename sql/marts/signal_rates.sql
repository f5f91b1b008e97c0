-- depends on: rate_rollup
-- Per run and policy, one row per signal: its pass rate over its own denominator and unit
-- (scenarios, predicates or assertions) with a Wilson 95% interval. Stalled scenarios are skipped,
-- as in all_summary.txt; a signal no scenario of the run had is absent, as its summary line is
-- (tau2's communicate in a voice-agent run).
WITH per_signal AS (
    SELECT run_id, policy_id, policy_name, judge, unnest([
        {{ signal_rows }}  -- one per declared signal (transforms/registry.py SIGNALS)
    ], recursive := true)
    FROM rate_rollup
    WHERE domain = '(all)'
)
SELECT run_id, policy_id, policy_name, judge, signal, unit, passed, total, passed / total AS rate,
       wilson_low(passed, total) AS ci_low, wilson_high(passed, total) AS ci_high, signal_order
FROM per_signal
WHERE total > 0
