-- `Warehouse.evidence()`: the judgement of a scenario by a policy's judge ($judge; `recorded`: the
-- run's own judge_result.json).
SELECT judge, score, reason, judge_error AS errored, extra_json, reply
FROM judgements
WHERE judge = $judge AND run_id = $run_id AND scenario_name = $scenario
