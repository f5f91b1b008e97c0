-- Every turn of the scenarios of $runs (a list, or NULL for all), in order: what Inspect's messages_df gives.
SELECT t.run_id, t.scenario_name, s.domain, t.ordinal, t.role, t.text, t.timestamp, t.latency_ms
FROM stg_turns AS t
JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
WHERE $runs IS NULL OR list_contains($runs, t.run_id)
ORDER BY t.run_id, s.position, t.ordinal
