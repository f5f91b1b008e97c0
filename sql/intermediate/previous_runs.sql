-- depends on: stg_runs
-- Each run's run before it in its group (session order; NULL for a group's first run).
SELECT run_id, lag(run_id) OVER (PARTITION BY run_group ORDER BY session_started_at NULLS FIRST, run_id)
           AS previous_run
FROM stg_runs
