-- `scorelake latency --by scenario`: each scenario of the runs $runs (a list, or NULL for all), the
-- slowest (by p95, then max) first.
SELECT run_id, scenario_name, domain, exchanges, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms,
       first_response_ms, interrupted, interrupted_rate, duration_s, turns
FROM scenario_latency
WHERE $runs IS NULL OR list_contains($runs, run_id)
ORDER BY p95_ms DESC NULLS LAST, max_ms DESC NULLS LAST, run_id, position
