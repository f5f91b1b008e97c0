-- `judges --calibrate`: every verdict of $judge with its confidence and, where people gave one, the
-- verdict that stands on JUDGE_PASSED (the latest standing review, as `rates --calibrated` reads it).
SELECT c.run_id, c.scenario_name, c.domain, c.passed, c.confidence, p.passed AS people_passed
FROM judge_confidence AS c
LEFT JOIN judge_labels AS p USING (run_id, scenario_name)
WHERE c.judge = $judge
