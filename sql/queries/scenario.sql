-- `Warehouse.evidence()`: the scenarios asked for (a report asks for many at once) under one policy:
-- the runs $run_ids and names $scenarios prune the files, the pairs $keys (run, unit separator,
-- scenario) are exact. Every column of scenario_scores, with what ACTION_MATCH compared (the reference
-- and the prediction, and the comparator's flags).
SELECT ss.*, s.reference_json, s.prediction_json, s.ignore_capitalization, s.ignore_punctuation, s.clean_text,
       s.disallow_extra_items
FROM scenario_scores AS ss
JOIN stg_scenarios AS s USING (run_id, scenario_name)
WHERE list_contains($run_ids, ss.run_id) AND list_contains($scenarios, ss.scenario_name)
      AND list_contains($keys, ss.run_id || chr(31) || ss.scenario_name) AND ss.policy_id = $policy_id
