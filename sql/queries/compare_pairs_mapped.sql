-- `scorelake compare --map M`: run A's and run B's scenarios paired as the task map $map_name says
-- (each side's key a scenario name or a task id of that run; of several trials of a task in a run,
-- its first), under the policy $policy_id, as compare_pairs.sql gives them: A's name for the pair,
-- B's beside it (`counterpart`). Definitions are not compared across harnesses (NULL).
WITH m AS (
    SELECT a AS key_a, b AS key_b FROM stg_task_maps WHERE map_name = $map_name
),
a AS (
    SELECT s.scenario_name, s.domain, s.is_successful, m.key_a, m.key_b
    FROM scenario_scores AS s JOIN m ON m.key_a IN (s.scenario_name, s.task_id)
    WHERE s.policy_id = $policy_id AND s.run_id = $run_a
    QUALIFY row_number() OVER (PARTITION BY m.key_a, m.key_b ORDER BY s.trial, s.scenario_name) = 1
),
b AS (
    SELECT s.scenario_name, s.domain, s.is_successful, m.key_a, m.key_b
    FROM scenario_scores AS s JOIN m ON m.key_b IN (s.scenario_name, s.task_id)
    WHERE s.policy_id = $policy_id AND s.run_id = $run_b
    QUALIFY row_number() OVER (PARTITION BY m.key_a, m.key_b ORDER BY s.trial, s.scenario_name) = 1
)
SELECT coalesce(a.scenario_name, b.scenario_name) AS scenario_name, b.scenario_name AS counterpart,
       coalesce(a.domain, b.domain) AS domain,
       a.scenario_name IS NOT NULL AS in_a, b.scenario_name IS NOT NULL AS in_b,
       a.is_successful AS is_successful_a, b.is_successful AS is_successful_b,
       NULL::VARCHAR AS definition_a, NULL::VARCHAR AS definition_b, NULL::VARCHAR AS parts_a, NULL::VARCHAR AS parts_b
FROM a FULL JOIN b USING (key_a, key_b)
ORDER BY domain, scenario_name
