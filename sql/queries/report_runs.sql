-- `scorelake report`: the runs scored under a policy, in session order (the charts' x axis).
SELECT DISTINCT r.run_id, r.session_started_at, r.source, r.run_group
FROM stg_runs AS r
JOIN stg_scores AS s USING (run_id, generation)
WHERE s.policy_id = $policy_id
ORDER BY r.session_started_at NULLS FIRST, r.run_id
