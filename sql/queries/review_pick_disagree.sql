-- The scenarios two judges ($judge_a, $judge_b) disagree on: on JUDGE_PASSED, or else on an NL assertion.
WITH passed_apart AS (
    SELECT s.run_id, s.scenario_name, 'judges disagree on judge_passed' AS reason, true AS gated
    FROM scope AS s
    JOIN judgements AS a ON a.run_id = s.run_id AND a.scenario_name = s.scenario_name AND a.judge = $judge_a
    JOIN judgements AS b ON b.run_id = s.run_id AND b.scenario_name = s.scenario_name AND b.judge = $judge_b
    WHERE NOT a.judge_error AND NOT b.judge_error
      AND (a.score >= s.threshold AND NOT isnan(a.score)) <> (b.score >= s.threshold AND NOT isnan(b.score))
)
SELECT * FROM passed_apart
UNION ALL
SELECT DISTINCT * FROM (
    SELECT s.run_id, s.scenario_name, 'judges disagree on an NL assertion' AS reason, true AS gated
    FROM scope AS s
    JOIN judge_nl_verdicts AS a ON a.run_id = s.run_id AND a.scenario_name = s.scenario_name AND a.judge = $judge_a
    JOIN judge_nl_verdicts AS b ON b.run_id = a.run_id AND b.scenario_name = a.scenario_name
                               AND b.assertion_index = a.assertion_index AND b.judge = $judge_b
    WHERE a.passed <> b.passed
) AS nl
WHERE (run_id, scenario_name) NOT IN (SELECT (run_id, scenario_name) FROM passed_apart)
