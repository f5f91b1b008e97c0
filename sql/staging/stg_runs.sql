-- One row per ingested session directory; its generation names the committed rows of the other tables.
SELECT *
FROM read_parquet('{{ tables }}/runs/**/*.parquet')
