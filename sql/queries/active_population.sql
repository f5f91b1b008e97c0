-- An active draw's population: the scenarios of $run (or every run) the policy's judge judged, with
-- how likely it is wrong (its `doubt`, 1 - confidence), and people's labels already standing.
SELECT c.run_id, c.scenario_name, c.domain, 1 - c.confidence AS doubt, p.judge,
       EXISTS (SELECT 1 FROM reviews AS r
               WHERE r.run_id = c.run_id AND r.scenario_name = c.scenario_name AND r.signal = 'judge_passed')
           AS labelled
FROM judge_confidence AS c
JOIN stg_policies AS p ON p.judge = c.judge
WHERE p.policy_id = $policy_id AND ($run IS NULL OR c.run_id = $run)
ORDER BY c.run_id, c.scenario_name
