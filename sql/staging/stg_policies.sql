-- Stored scoring policies; the "recorded" policy scores each run under its own run_args.json flags.
-- One row per policy (two writers on object storage may both have stored it). `judge`: whose
-- judgements its JUDGE_PASSED and NL_ASSERTION take (`recorded`: the runs' own judge_result.json);
-- `reviews`: whether people's verdicts (`scorelake review`) take the place of what they review.
SELECT *, coalesce(json_extract_string(spec_json, '$.judge'), 'recorded') AS judge,
       coalesce(json_extract(spec_json, '$.reviews')::BOOLEAN, false) AS reviews
FROM {{ policies }}
QUALIFY row_number() OVER (PARTITION BY policy_id ORDER BY created_at) = 1
