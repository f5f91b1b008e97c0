-- What to review next ($pick): the scenarios whose judge failed (errors), those two judges ($judge_a,
-- $judge_b) disagree on, on JUDGE_PASSED or an NL assertion (disagree), or a random sample of
-- $per_domain per domain, the same for the same $seed (sample); of $run or of every run, under the
-- policy $policy_id. Scenarios nobody has reviewed first; at most $limit.
WITH scope AS (
    SELECT s.run_id, s.scenario_name, s.domain, s.position, p.judge, coalesce(s.rec_judge_threshold, 0.9) AS threshold
    FROM stg_scores AS sc
    JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
    JOIN stg_policies AS p USING (policy_id)
    WHERE sc.policy_id = $policy_id AND ($run IS NULL OR s.run_id = $run)
),
errors AS (  -- the recorded judge's failures from its results, another judge's from its judgements
    SELECT s.run_id, s.scenario_name, 'the judge failed' AS reason
    FROM scope AS s
    JOIN stg_judge_results AS j USING (run_id, scenario_name)
    WHERE $pick = 'errors' AND s.judge = 'recorded' AND j.errored
    UNION ALL
    SELECT s.run_id, s.scenario_name, 'the judge failed' AS reason
    FROM scope AS s
    JOIN judgements AS j ON j.judge = s.judge AND j.run_id = s.run_id AND j.scenario_name = s.scenario_name
    WHERE $pick = 'errors' AND s.judge <> 'recorded' AND j.judge_error
),
passed_apart AS (
    SELECT s.run_id, s.scenario_name, 'judges disagree on judge_passed' AS reason
    FROM scope AS s
    JOIN judgements AS a ON a.run_id = s.run_id AND a.scenario_name = s.scenario_name AND a.judge = $judge_a
    JOIN judgements AS b ON b.run_id = s.run_id AND b.scenario_name = s.scenario_name AND b.judge = $judge_b
    WHERE $pick = 'disagree' AND NOT a.judge_error AND NOT b.judge_error
      AND (a.score >= s.threshold AND NOT isnan(a.score)) <> (b.score >= s.threshold AND NOT isnan(b.score))
),
nl_apart AS (
    SELECT DISTINCT s.run_id, s.scenario_name, 'judges disagree on an NL assertion' AS reason
    FROM scope AS s
    JOIN judge_nl_verdicts AS a ON a.run_id = s.run_id AND a.scenario_name = s.scenario_name AND a.judge = $judge_a
    JOIN judge_nl_verdicts AS b ON b.run_id = a.run_id AND b.scenario_name = a.scenario_name
                               AND b.assertion_index = a.assertion_index AND b.judge = $judge_b
    WHERE $pick = 'disagree' AND a.passed <> b.passed
),
sample AS (
    SELECT run_id, scenario_name, 'sample' AS reason
    FROM scope
    WHERE $pick = 'sample'
    QUALIFY row_number() OVER (PARTITION BY domain ORDER BY hash($seed, run_id, scenario_name), run_id, scenario_name)
        <= $per_domain
),
picked AS (
    SELECT * FROM errors
    UNION ALL SELECT * FROM passed_apart
    UNION ALL SELECT * FROM nl_apart WHERE (run_id, scenario_name) NOT IN (SELECT (run_id, scenario_name) FROM passed_apart)
    UNION ALL SELECT * FROM sample
),
reviewed AS (
    SELECT run_id, scenario_name, count(*) AS reviews FROM reviews GROUP BY ALL
)
SELECT p.run_id, p.scenario_name, s.domain, p.reason, coalesce(r.reviews, 0) AS reviews
FROM picked AS p
JOIN scope AS s USING (run_id, scenario_name)
LEFT JOIN reviewed AS r USING (run_id, scenario_name)
ORDER BY r.reviews IS NOT NULL, CASE WHEN $pick = 'sample' THEN hash($seed, p.run_id, p.scenario_name) END,
         p.run_id, s.position
LIMIT $limit
