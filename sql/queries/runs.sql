-- `Warehouse.runs()`: every committed run, oldest session first.
SELECT * EXCLUDE (generation, fingerprint)
FROM stg_runs
ORDER BY session_started_at NULLS LAST, run_id
