-- `Warehouse.verdicts()`: per-predicate and per-assertion verdicts, optionally of one run, one
-- scenario, one kind (db_state_assertion, nl_assertion, action, communicate).
SELECT * EXCLUDE (generation)
FROM stg_verdicts
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($scenario IS NULL OR scenario_name = $scenario)
  AND ($kind IS NULL OR kind = $kind)
ORDER BY run_id, scenario_name, kind, ordinal
