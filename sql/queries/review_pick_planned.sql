-- A label plan's stratified sample (compare-judges --plan): per domain and the judge's verdict
-- ($domains, $verdicts, $counts side by side), that many scenarios the judge $judge_a judged and
-- nobody labelled on judge_passed, drawn at random, the same for the same $seed.
WITH judged AS (
    SELECT s.run_id, s.scenario_name, s.domain, j.score >= s.threshold AND NOT isnan(j.score) AS judge_passed
    FROM scope AS s
    JOIN judgements AS j ON j.run_id = s.run_id AND j.scenario_name = s.scenario_name AND j.judge = $judge_a
    WHERE NOT j.judge_error
      AND NOT EXISTS (SELECT 1 FROM reviews AS r WHERE r.run_id = s.run_id AND r.scenario_name = s.scenario_name
                                                   AND r.signal = 'judge_passed' AND r.assertion IS NULL)
),
wanted AS (
    SELECT unnest($domains) AS domain, unnest($verdicts) AS judge_passed, unnest($counts) AS more
)
SELECT j.run_id, j.scenario_name,
       'planned label: ' || j.domain || ', the judge ' || CASE WHEN j.judge_passed THEN 'passed' ELSE 'failed' END
           AS reason,
       true AS gated
FROM judged AS j
JOIN wanted AS w ON w.domain = j.domain AND w.judge_passed = j.judge_passed
QUALIFY row_number() OVER (PARTITION BY j.domain, j.judge_passed ORDER BY hash($seed, j.run_id, j.scenario_name))
    <= w.more
