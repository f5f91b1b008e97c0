-- The scenarios whose judge failed: the recorded judge's from its results, another judge's from its
-- judgements; `gated` where a judge signal (judge_passed, nl_assertion) gates the scenario's success,
-- else the reason says so: its failure changes no verdict there.
WITH failed AS (
    SELECT s.run_id, s.scenario_name, s.gates
    FROM scope AS s
    JOIN stg_judge_results AS j USING (run_id, scenario_name)
    WHERE s.judge = 'recorded' AND j.errored
    UNION ALL
    SELECT s.run_id, s.scenario_name, s.gates
    FROM scope AS s
    JOIN judgements AS j ON j.judge = s.judge AND j.run_id = s.run_id AND j.scenario_name = s.scenario_name
    WHERE s.judge <> 'recorded' AND j.judge_error
)
SELECT run_id, scenario_name,
       CASE WHEN gated THEN 'the judge failed'
            ELSE 'the judge failed, but it gates nothing here (judge_passed and nl_assertion are outside the whitelist)'
       END AS reason, gated
FROM (SELECT *, list_has_any(gates, ['judge_passed', 'nl_assertion']) AS gated FROM failed)
