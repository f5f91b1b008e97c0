-- The scenarios whose judge failed: the recorded judge's from its results, another judge's from its judgements.
SELECT s.run_id, s.scenario_name, 'the judge failed' AS reason
FROM scope AS s
JOIN stg_judge_results AS j USING (run_id, scenario_name)
WHERE s.judge = 'recorded' AND j.errored
UNION ALL
SELECT s.run_id, s.scenario_name, 'the judge failed' AS reason
FROM scope AS s
JOIN judgements AS j ON j.judge = s.judge AND j.run_id = s.run_id AND j.scenario_name = s.scenario_name
WHERE s.judge <> 'recorded' AND j.judge_error
