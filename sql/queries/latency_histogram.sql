-- The viewer's latency distribution of run $run_id: its response latencies counted in $bins
-- equal-width bins from 0 to the run's p99 (the runner's percentile), and one last open bin
-- (high_ms NULL) for the slower ones, so a single outlier does not squash the rest.
WITH measured AS (
    SELECT unnest(latencies_ms) AS ms FROM scenario_latency WHERE run_id = $run_id
),
span AS (
    SELECT greatest(list_sort(list(ms))[floor(count(*) * 0.99)::BIGINT + 1], 1e-9) / $bins AS width FROM measured
),
binned AS (
    SELECT least(floor(ms / width)::BIGINT, $bins) AS bin, count(*) AS exchanges
    FROM measured, span
    GROUP BY ALL
)
SELECT b.bin, b.bin * s.width AS low_ms, CASE WHEN b.bin < $bins THEN (b.bin + 1) * s.width END AS high_ms,
       coalesce(x.exchanges, 0) AS exchanges
FROM range(0, $bins + 1) AS b(bin)
CROSS JOIN span AS s
LEFT JOIN binned AS x USING (bin)
WHERE (SELECT count(*) FROM measured) > 0
ORDER BY b.bin
