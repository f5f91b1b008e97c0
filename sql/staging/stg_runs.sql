-- One row per ingested run: its committed row, the newest generation among the compacted snapshot
-- and the per-run files; that generation names the committed rows of the other tables.
SELECT *
FROM (
    SELECT * FROM read_parquet('{{ tables }}/_snapshots/runs.parquet')
    UNION ALL
    SELECT * FROM read_parquet('{{ tables }}/runs/*/*.parquet')
)
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY generation DESC) = 1
