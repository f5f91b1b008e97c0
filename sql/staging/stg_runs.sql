-- One row per ingested run: its committed row, whose generation names the committed rows of the
-- other tables. The runs table holds one row per run; should two writers on object storage have
-- committed one run at the same moment, the newer generation counts.
SELECT *
FROM {{ runs }}
QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY generation DESC) = 1
