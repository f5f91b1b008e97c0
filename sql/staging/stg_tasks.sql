-- The tasks table (what each scenario asked of the agent: the simulated user's goal and
-- instructions), restricted to each run's committed generation.
SELECT t.*
FROM {{ tasks }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
