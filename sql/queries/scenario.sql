-- `Warehouse.evidence()`: one scenario of one run under one policy, every column of scenario_scores,
-- with what ACTION_MATCH compared (the reference and the prediction, and the comparator's flags).
SELECT ss.*, s.reference_json, s.prediction_json, s.ignore_capitalization, s.ignore_punctuation, s.clean_text,
       s.disallow_extra_items
FROM scenario_scores AS ss
JOIN stg_scenarios AS s USING (run_id, scenario_name)
WHERE ss.run_id = $run_id AND ss.scenario_name = $scenario AND ss.policy_id = $policy_id
