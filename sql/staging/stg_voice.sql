-- depends on: stg_runs
-- The voice table (per scenario: turn-taking from its speech segments, what each side heard),
-- restricted to each run's committed generation.
SELECT v.*
FROM {{ voice }} AS v
SEMI JOIN stg_runs AS r ON v.run_id = r.run_id AND v.generation = r.generation
