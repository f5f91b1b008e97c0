-- depends on: rate_rollup, stg_runs
-- The headline numbers of each run under each policy: rate_rollup's whole-run row.
SELECT r.session_started_at, rr.* EXCLUDE (domain)
FROM rate_rollup AS rr
JOIN stg_runs AS r USING (run_id)
WHERE rr.domain = '(all)'
