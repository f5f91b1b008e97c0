-- The scores table, restricted to each run's committed generation and to stored policies: rows of
-- older or half-written generations, and of a policy whose re-score has not finished, stay invisible.
SELECT t.*
FROM read_parquet('{{ tables }}/scores/**/*.parquet') AS t
SEMI JOIN read_parquet('{{ tables }}/runs/**/*.parquet') AS r
    ON t.run_id = r.run_id AND t.generation = r.generation
SEMI JOIN read_parquet('{{ tables }}/policies/**/*.parquet') AS p
    ON t.policy_id = p.policy_id
