-- the scenarios whose verdict of the policy's judge its calibration escalates to people, the least
-- confident first (`weight`: the chance the judge is wrong there, where a label changes the most).
SELECT s.run_id, s.scenario_name,
       CASE WHEN e.threshold IS NULL
            THEN format('escalated: no threshold gives the guarantee yet (the judge''s confidence {:.2f})', e.confidence)
            ELSE format('escalated: the judge''s confidence {:.2f} is below its calibrated threshold {:.2f}',
                        e.confidence, e.threshold) END AS reason,
       true AS gated, 1 - e.confidence AS weight
FROM scope AS s
JOIN judge_escalations AS e ON e.run_id = s.run_id AND e.scenario_name = s.scenario_name AND e.judge = s.judge
WHERE NOT e.kept
