-- `scorelake report`: each domain's response latency distribution per run scored under $policy_id
-- (the runner's percentile: sorted values, index int(n * q)), for its box charts.
WITH pooled AS (
    SELECT run_id, domain, list_sort(flatten(list(latencies_ms))) AS ms
    FROM scenario_latency
    WHERE latencies_ms IS NOT NULL
      AND run_id IN (SELECT run_id FROM stg_rate_counts WHERE policy_id = $policy_id)
    GROUP BY ALL
)
SELECT run_id, domain, len(ms) AS exchanges,
       ms[floor(len(ms) * 0.05)::BIGINT + 1] AS p05_ms, ms[floor(len(ms) * 0.25)::BIGINT + 1] AS p25_ms,
       ms[floor(len(ms) * 0.50)::BIGINT + 1] AS p50_ms, ms[floor(len(ms) * 0.75)::BIGINT + 1] AS p75_ms,
       ms[floor(len(ms) * 0.95)::BIGINT + 1] AS p95_ms, list_max(ms) AS max_ms
FROM pooled
WHERE len(ms) > 0
