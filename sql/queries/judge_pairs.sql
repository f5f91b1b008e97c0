-- Two judges' judgements of the same scenarios ($a, $b; $runs: a list of run ids, or NULL for all):
-- scores, JUDGE_PASSED at each scenario's threshold ($threshold, else the run's --judge-threshold,
-- else upstream's 0.9), and whether either judge failed.
SELECT a.run_id, a.scenario_name, a.domain,
       a.score AS score_a, b.score AS score_b,
       a.score >= t.threshold AND NOT isnan(a.score) AS passed_a,  -- NaN fails, as in Python
       b.score >= t.threshold AND NOT isnan(b.score) AS passed_b,
       a.judge_error AS error_a, b.judge_error AS error_b
FROM judgements AS a
JOIN judgements AS b USING (run_id, scenario_name)
JOIN (SELECT run_id, scenario_name, coalesce($threshold, rec_judge_threshold, 0.9) AS threshold
      FROM stg_scenarios) AS t USING (run_id, scenario_name)
WHERE a.judge = $a AND b.judge = $b AND ($runs IS NULL OR list_contains($runs, a.run_id))
ORDER BY a.run_id, a.scenario_name
