-- `scorelake voice --by scenario`: every scenario of the runs $runs (NULL: all), with its failure
-- causes under the policy $policy_id (the primary one, its evidence, every one that holds), the worst heard first.
SELECT v.*, c.failure_cause, c.evidence AS failure_evidence, c.failure_causes, c.causes_evidence
FROM scenario_voice AS v
LEFT JOIN (SELECT * FROM scenario_failure_causes WHERE policy_id = $policy_id) AS c USING (run_id, scenario_name)
WHERE $runs IS NULL OR list_contains($runs, v.run_id)
ORDER BY v.run_id, v.user_to_agent_wer DESC NULLS LAST, v.position
