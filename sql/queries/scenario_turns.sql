-- `Warehouse.evidence()`: a scenario's conversation, in order.
SELECT ordinal, role, text, timestamp, latency_ms
FROM turns
WHERE run_id = $run_id AND scenario_name = $scenario
ORDER BY ordinal
