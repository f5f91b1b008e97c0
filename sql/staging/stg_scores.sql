-- depends on: stg_policies, stg_runs
-- The scores table, restricted to each run's committed generation and to stored policies (a
-- policy is stored once all its scores are written, so a new policy appears whole).
SELECT t.*
FROM {{ scores }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
SEMI JOIN stg_policies AS p ON t.policy_id = p.policy_id
