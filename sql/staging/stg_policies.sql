-- Stored scoring policies; the "recorded" policy scores each run under its own run_args.json flags.
-- One row per policy (two writers on object storage may both have stored it).
SELECT *
FROM {{ policies }}
QUALIFY row_number() OVER (PARTITION BY policy_id ORDER BY created_at) = 1
