-- depends on: calibrations, judge_confidence
-- Each calibrated judge's verdict per scenario, kept or escalated to people by the calibration that
-- stands for its domain (or, without one, for (all)); `threshold` NULL (no threshold gave the
-- guarantee): every verdict escalated.
SELECT c.judge, c.run_id, c.scenario_name, c.domain, c.passed, c.confidence,
       coalesce(d.calibration_id, a.calibration_id) AS calibration_id,
       coalesce(d.threshold, a.threshold) AS threshold,
       coalesce(c.confidence >= coalesce(d.threshold, a.threshold), false) AS kept
FROM judge_confidence AS c
LEFT JOIN calibrations AS d ON d.judge = c.judge AND d.scope = c.domain
LEFT JOIN calibrations AS a ON a.judge = c.judge AND a.scope = '(all)'
WHERE d.calibration_id IS NOT NULL OR a.calibration_id IS NOT NULL
