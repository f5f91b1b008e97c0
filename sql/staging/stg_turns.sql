-- depends on: stg_runs
-- The turns table (evidence), restricted to each run's committed generation.
SELECT t.*
FROM {{ turns }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
