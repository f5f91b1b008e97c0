-- depends on: stg_quarantine, stg_runs
-- Everything ingest could not use, with the file and the reason; nothing is dropped silently.
SELECT q.run_id, r.session_path, q.scenario_name, q.file, q.reason, q.error, r.ingested_at
FROM stg_quarantine AS q
JOIN stg_runs AS r USING (run_id, generation)
