-- `Warehouse.evidence()`: a scenario's per-item verdicts (DB predicates, NL assertions, reference
-- actions, tau2 checks), in order; the NL assertions as the policy's judge ($judge) judged them.
SELECT kind, ordinal, label, side, passed, expected_json, actual_json, arguments_json, detail, error
FROM stg_verdicts
WHERE run_id = $run_id AND scenario_name = $scenario AND (kind <> 'nl_assertion' OR $judge = 'recorded')
UNION ALL
SELECT 'nl_assertion' AS kind, assertion_index AS ordinal, assertion AS label, NULL AS side, passed,
       NULL AS expected_json, NULL AS actual_json, NULL AS arguments_json, reason AS detail, NULL AS error
FROM judge_nl_verdicts
WHERE $judge <> 'recorded' AND judge = $judge AND run_id = $run_id AND scenario_name = $scenario
ORDER BY kind, ordinal
