-- depends on: reviews
-- People's label of each scenario's JUDGE_PASSED: the latest standing review of judge_passed (as a
-- whole, not an item), `passed` true for pass. What `rates --calibrated`, `rates --ppi` and
-- `judges --calibrate` measure the judge against.
SELECT run_id, scenario_name, verdict = 'pass' AS passed
FROM reviews
WHERE signal = 'judge_passed' AND assertion IS NULL
QUALIFY row_number() OVER (PARTITION BY run_id, scenario_name ORDER BY reviewed_at DESC, review_id DESC) = 1
