-- depends on: stg_runs
-- The judge_inputs table (what each scenario's judge was asked: judge_result.json's judge_input),
-- restricted to each run's committed generation, each row with its system prompt: stored once per
-- distinct prompt in judge_prompts (rows ingested before that hold their own).
SELECT t.* REPLACE (coalesce(t.system_prompt, p.system_prompt) AS system_prompt)
FROM {{ judge_inputs }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
LEFT JOIN (SELECT prompt_hash, any_value(system_prompt) AS system_prompt
           FROM {{ judge_prompts }} GROUP BY prompt_hash) AS p
    ON t.prompt_hash = p.prompt_hash
