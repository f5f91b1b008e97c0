-- `scorelake latency`: per run and domain (the whole run last), or per scenario slowest first ($by),
-- of the runs $runs (a list, or NULL for all).
SELECT run_id, domain, exchanges, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms, first_response_p50_ms,
       interrupted, interrupted_rate, scenarios, mean_duration_s, turns
FROM run_latency
WHERE $runs IS NULL OR list_contains($runs, run_id)
ORDER BY run_id, domain = '(all)', domain
