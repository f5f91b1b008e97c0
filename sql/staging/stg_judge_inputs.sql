-- The judge_inputs table (what each scenario's judge was asked: judge_result.json's judge_input),
-- restricted to each run's committed generation.
SELECT t.*
FROM {{ judge_inputs }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
