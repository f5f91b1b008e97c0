-- Each judge's verdicts ($judges; $runs: a list of run ids, or NULL for all): on JUDGE_PASSED (its
-- score at each scenario's threshold: $threshold, else the run's --judge-threshold, else upstream's
-- 0.9; a NaN score fails, as in Python) and on each NL assertion, with whether the judge failed.
-- The built-in judge `human` is the standing reviews of judge_passed and of numbered NL assertions (the
-- latest of a key), `human:NAME` one reviewer's.
WITH scoped AS (
    SELECT run_id, scenario_name, domain, coalesce($threshold, rec_judge_threshold, 0.9) AS threshold
    FROM stg_scenarios
    WHERE $runs IS NULL OR list_contains($runs, run_id)
),
nl_errors AS (
    SELECT judge, run_id, scenario_name, judge_error FROM judgements
)
SELECT j.judge, j.run_id, j.scenario_name, t.domain, 'judge_passed' AS kind, NULL::BIGINT AS assertion_index,
       NULL AS assertion, j.score, j.score >= t.threshold AND NOT isnan(j.score) AS passed, j.judge_error,
       t.threshold
FROM judgements AS j
JOIN scoped AS t USING (run_id, scenario_name)
WHERE list_contains($judges, j.judge)
UNION ALL BY NAME
SELECT v.judge, v.run_id, v.scenario_name, t.domain, 'nl_assertion' AS kind, v.assertion_index, v.assertion,
       NULL::DOUBLE AS score, v.passed, e.judge_error
FROM judge_nl_verdicts AS v
JOIN nl_errors AS e USING (judge, run_id, scenario_name)
JOIN scoped AS t USING (run_id, scenario_name)
WHERE list_contains($judges, v.judge)
UNION ALL BY NAME
SELECT r.judge, r.run_id, r.scenario_name, t.domain, r.signal AS kind, r.assertion AS assertion_index,
       NULL AS assertion, NULL::DOUBLE AS score, r.verdict = 'pass' AS passed, false AS judge_error, t.threshold
FROM (  -- `human`: the latest standing verdict of a key; `human:NAME`: that reviewer's own
    SELECT 'human' AS judge, * FROM reviews
    QUALIFY row_number() OVER (PARTITION BY run_id, scenario_name, signal, assertion
                               ORDER BY reviewed_at DESC, review_id DESC) = 1
    UNION ALL BY NAME
    SELECT 'human:' || reviewer AS judge, * FROM reviews
) AS r
JOIN scoped AS t USING (run_id, scenario_name)
WHERE list_contains($judges, r.judge)
  AND ((r.signal = 'judge_passed' AND r.assertion IS NULL) OR (r.signal = 'nl_assertion' AND r.assertion IS NOT NULL))
ORDER BY run_id, scenario_name, kind, assertion_index, judge
