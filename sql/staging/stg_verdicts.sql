-- The verdicts table, restricted to each run's committed generation: compacted rows, then per-run
-- rows not already in the snapshot. Rows of older or half-written generations stay invisible,
-- so readers never see a mix of two ingests.
WITH compacted AS (
    SELECT * FROM read_parquet('{{ tables }}/_snapshots/verdicts.parquet')
)
SELECT c.*
FROM compacted AS c
SEMI JOIN stg_runs AS r ON c.run_id = r.run_id AND c.generation = r.generation
UNION ALL
SELECT d.*
FROM read_parquet('{{ tables }}/verdicts/*/*.parquet') AS d
SEMI JOIN stg_runs AS r ON d.run_id = r.run_id AND d.generation = r.generation
ANTI JOIN (SELECT DISTINCT run_id, generation FROM compacted) AS k
    ON d.run_id = k.run_id AND d.generation = k.generation
