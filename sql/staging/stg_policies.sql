-- Stored scoring policies; the "recorded" policy scores each run under its own run_args.json flags.
SELECT *
FROM read_parquet('{{ tables }}/policies/**/*.parquet')
