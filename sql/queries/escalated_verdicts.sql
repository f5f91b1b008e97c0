-- A selective policy's scoring: the scenarios whose verdict of $judge its standing calibration escalates.
SELECT run_id, scenario_name
FROM judge_escalations
WHERE judge = $judge AND NOT kept
