-- `scorelake compare` and `gate`: each scenario's response latencies in the two runs (NULL where the
-- source records none), to compare the runs' latency per domain. In a fixed order: the seeded
-- bootstrap draws by position, so the same rows in another order would give another interval.
SELECT run_id, scenario_name, domain, latencies_ms, p50_ms
FROM scenario_latency
WHERE run_id IN ($run_a, $run_b)
ORDER BY run_id, position
