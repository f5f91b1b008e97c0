-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): a scenario's per-item verdicts (DB predicates, NL assertions, reference
-- actions, tau2 checks), in order; the NL assertions as the policy's judge ($judge) judged them.
SELECT run_id, scenario_name, kind, ordinal, label, side, passed, expected_json, actual_json, arguments_json, detail, error
FROM stg_verdicts
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name) AND (kind <> 'nl_assertion' OR $judge = 'recorded')
UNION ALL
SELECT run_id, scenario_name, 'nl_assertion' AS kind, assertion_index AS ordinal, assertion AS label, NULL AS side, passed,
       NULL AS expected_json, NULL AS actual_json, NULL AS arguments_json, reason AS detail, NULL AS error
FROM judge_nl_verdicts
WHERE $judge <> 'recorded' AND judge = $judge AND list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
ORDER BY run_id, scenario_name, kind, ordinal
