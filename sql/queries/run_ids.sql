-- Every committed run's id (what a name that is none is compared with: "did you mean").
SELECT run_id FROM stg_runs ORDER BY run_id
