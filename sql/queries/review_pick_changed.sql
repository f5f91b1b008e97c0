-- The scenarios of run $run_b whose composite verdict changed from run $run_a (run_diff under the
-- policy): what a comparison says was fixed or broken, to be checked by a person.
SELECT s.run_id, s.scenario_name, coalesce(d.flip, 'changed') || ' since ' || $run_a AS reason, true AS gated
FROM scope AS s
JOIN run_diff AS d ON d.run_b = s.run_id AND d.scenario_name = s.scenario_name
WHERE d.run_a = $run_a AND d.run_b = $run_b AND d.policy_id = $policy_id AND d.flipped
