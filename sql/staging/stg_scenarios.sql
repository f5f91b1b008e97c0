-- depends on: stg_runs
-- The scenarios table, restricted to each run's committed generation: rows of older or half-written
-- ingests stay invisible, so readers never see a mix of two ingests.
SELECT t.*
FROM {{ scenarios }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
