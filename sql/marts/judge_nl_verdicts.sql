-- depends on: stg_judge_inputs, stg_judgements, stg_verdicts
-- Each judge's verdict on each NL assertion of a scenario (normalised as upstream: exactly one per
-- assertion, in numbered order), for the recorded judge and every judge `scorelake rejudge` asked.
SELECT 'recorded' AS judge, run_id, scenario_name, ordinal AS assertion_index, label AS assertion, passed,
       detail AS reason
FROM stg_verdicts
WHERE kind = 'nl_assertion'
UNION ALL BY NAME
SELECT judge, run_id, scenario_name, v."index" AS assertion_index, v.assertion, v.passed, v.reason
FROM (
    SELECT g.judge, g.run_id, g.scenario_name,
           unnest(from_json(g.nl_verdicts_json,
                            '[{"index": "BIGINT", "assertion": "VARCHAR", "passed": "BOOLEAN", "reason": "VARCHAR"}]')) AS v
    FROM stg_judgements AS g
    SEMI JOIN stg_judge_inputs AS i
        ON g.run_id = i.run_id AND g.scenario_name = i.scenario_name AND g.input_hash = i.input_hash
    WHERE g.nl_verdicts_json IS NOT NULL
)
