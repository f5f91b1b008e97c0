-- `rates --ppi`: every scenario the policy's judge judged (stalled ones left out, as every per-signal
-- rate leaves them out), with its JUDGE_PASSED under the policy, people's verdict on it where one
-- stands (judge_labels) and, where an active draw drew it for a label, its chance.
WITH drawn AS (
    SELECT d.run_id, d.scenario_name, d.probability
    FROM stg_label_draws AS d
    JOIN stg_policies AS p ON p.judge = d.judge
    WHERE p.policy_id = $policy_id
    QUALIFY row_number() OVER (PARTITION BY d.run_id, d.scenario_name ORDER BY d.drawn_at DESC) = 1
)
SELECT s.run_id, s.domain, s.scenario_name, s.judge_passed, p.passed AS people_passed, d.probability,
       s.run_id IN (SELECT run_id FROM drawn) AS run_drawn
FROM scenario_scores AS s
LEFT JOIN judge_labels AS p USING (run_id, scenario_name)
LEFT JOIN drawn AS d USING (run_id, scenario_name)
WHERE s.policy_id = $policy_id AND s.judge_passed IS NOT NULL AND NOT s.stalled
  AND ($run_id IS NULL OR s.run_id = $run_id)
ORDER BY s.run_id, s.domain, s.scenario_name
