-- `scorelake export otlp`: every scenario of $runs (each run when NULL) under the policy $policy_id not
-- yet sent to $endpoint: its composite and signals (scenario_scores), its policy's judge's reason,
-- in run and scenario order.
SELECT s.*, j.reason AS judge_reason
FROM scenario_scores AS s
JOIN stg_policies AS p USING (policy_id)
LEFT JOIN judgements AS j ON j.judge = p.judge AND j.run_id = s.run_id AND j.scenario_name = s.scenario_name
WHERE s.policy_id = $policy_id AND ($runs IS NULL OR list_contains($runs, s.run_id))
  AND NOT EXISTS (SELECT 1 FROM stg_exports AS e
                  WHERE e.endpoint = $endpoint AND e.policy_id = $policy_id AND e.run_id = s.run_id
                    AND e.scenario_name = s.scenario_name)
ORDER BY s.run_id, s.position, s.scenario_name
