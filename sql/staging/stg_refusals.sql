-- Sessions the latest ingest refused as a whole (a run id already ingested from another folder).
SELECT *
FROM {{ refusals }}
