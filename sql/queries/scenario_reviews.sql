-- The standing reviews of each scenario asked for (`show`, the viewer's scenario page; see scenario.sql).
SELECT run_id, scenario_name, signal, assertion, verdict, reviewer, note, reviewed_at FROM reviews
WHERE list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
ORDER BY run_id, scenario_name, signal, assertion NULLS FIRST
