-- One committed run.
SELECT * FROM stg_runs WHERE run_id = $run_id
