-- depends on: stg_runs
-- The tool_calls table (evidence), restricted to each run's committed generation.
SELECT t.*
FROM {{ tool_calls }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
