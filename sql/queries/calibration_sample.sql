-- `judges --calibrate`: every verdict of $judge with its confidence and, where people gave one, the
-- verdict that stands on JUDGE_PASSED (the latest standing review, as `rates --calibrated` reads it).
WITH people AS (
    SELECT run_id, scenario_name, verdict = 'pass' AS passed
    FROM reviews
    WHERE signal = 'judge_passed' AND assertion IS NULL
    QUALIFY row_number() OVER (PARTITION BY run_id, scenario_name ORDER BY reviewed_at DESC, review_id DESC) = 1
)
SELECT c.run_id, c.scenario_name, c.domain, c.passed, c.confidence, p.passed AS people_passed
FROM judge_confidence AS c
LEFT JOIN people AS p USING (run_id, scenario_name)
WHERE c.judge = $judge
