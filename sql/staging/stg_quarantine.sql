-- The quarantine table, restricted to each run's committed generation: rows of older or
-- half-written generations stay invisible, so readers never see a mix of two ingests.
SELECT t.*
FROM read_parquet('{{ tables }}/quarantine/**/*.parquet') AS t
SEMI JOIN read_parquet('{{ tables }}/runs/**/*.parquet') AS r
    ON t.run_id = r.run_id AND t.generation = r.generation
