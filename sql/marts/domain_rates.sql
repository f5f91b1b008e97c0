-- depends on: rate_rollup
-- Per run, policy and domain bucket: composite and task success and every per-signal rate with
-- the runner's own denominator and a Wilson 95% interval (columns: see rate_rollup).
SELECT * FROM rate_rollup WHERE domain <> '(all)'
