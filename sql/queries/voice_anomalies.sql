-- `scorelake check`: what each scenario's speech segments hold that no measure should trust (the
-- voice table's anomalies: not a list, items that are no segment, out of order, a segment over the bound).
SELECT run_id, scenario_name, unnest(anomalies) AS anomaly
FROM stg_voice
WHERE len(anomalies) > 0
ORDER BY run_id, scenario_name
