-- `scorelake compare` and `gate`: every scenario of either run under the policy $policy_id, side by
-- side by name: whether each run has it, its composite verdict in each, and its definition in each
-- (lineage: the hash, and each part's hash as JSON, to say what changed).
WITH a AS (
    SELECT scenario_name, domain, is_successful, definition_hash, definition_json
    FROM scenario_scores WHERE policy_id = $policy_id AND run_id = $run_a
),
b AS (
    SELECT scenario_name, domain, is_successful, definition_hash, definition_json
    FROM scenario_scores WHERE policy_id = $policy_id AND run_id = $run_b
)
SELECT scenario_name, coalesce(b.domain, a.domain) AS domain,
       a.scenario_name IS NOT NULL AS in_a, b.scenario_name IS NOT NULL AS in_b,
       a.is_successful AS is_successful_a, b.is_successful AS is_successful_b,
       a.definition_hash AS definition_a, b.definition_hash AS definition_b,
       a.definition_json AS parts_a, b.definition_json AS parts_b
FROM a FULL JOIN b USING (scenario_name)
ORDER BY domain, scenario_name
