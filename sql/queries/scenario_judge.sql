-- `Warehouse.evidence()`, per scenario asked for (see scenario.sql): the judgement of a scenario by a policy's judge ($judge; `recorded`: the
-- run's own judge_result.json).
SELECT run_id, scenario_name, judge, score, reason, judge_error AS errored, extra_json, reply
FROM judgements
WHERE judge = $judge AND list_contains($run_ids, run_id) AND list_contains($scenarios, scenario_name)
      AND list_contains($keys, run_id || chr(31) || scenario_name)
