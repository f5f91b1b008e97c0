-- depends on: stg_runs
-- The tasks table (what each scenario asked of the agent: the simulated user's goal and
-- instructions), restricted to each run's committed generation, each row with its instructions:
-- stored once per distinct text in task_instructions (rows ingested before that hold their own).
SELECT t.* REPLACE (coalesce(t.instructions, i.instructions) AS instructions)
FROM {{ tasks }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
LEFT JOIN (SELECT instructions_hash, any_value(instructions) AS instructions
           FROM {{ task_instructions }} GROUP BY instructions_hash) AS i
    ON t.instructions_hash = i.instructions_hash
