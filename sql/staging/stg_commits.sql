-- The write steps (ingest, re-score, compaction, migration) the warehouse recorded, oldest first.
SELECT *
FROM {{ commits }}
