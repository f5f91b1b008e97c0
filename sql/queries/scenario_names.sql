-- The scenarios of one committed run, by name (what a name that is none is compared with: "did you mean").
SELECT DISTINCT scenario_name FROM stg_scenarios WHERE run_id = $run_id ORDER BY scenario_name
