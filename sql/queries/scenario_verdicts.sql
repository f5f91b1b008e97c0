-- `Warehouse.evidence()`: a scenario's per-item verdicts (DB predicates, NL assertions, reference
-- actions, tau2 checks), in order.
SELECT kind, ordinal, label, side, passed, expected_json, actual_json, detail, error
FROM stg_verdicts
WHERE run_id = $run_id AND scenario_name = $scenario
ORDER BY kind, ordinal
