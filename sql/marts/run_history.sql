-- depends on: rate_rollup, stg_runs
-- Runs over time: every rate per run, policy and domain (plus '(all)'), in session-timestamp order.
SELECT r.session_started_at, r.source, r.run_group, rr.*
FROM rate_rollup AS rr
JOIN stg_runs AS r USING (run_id)
ORDER BY r.session_started_at, rr.run_id, rr.policy_id, rr.domain
