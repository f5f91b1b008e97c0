-- `scorelake export otlp`: people's standing verdicts on the scenarios of $runs (each run when NULL).
SELECT run_id, scenario_name, signal, assertion, verdict, reviewer, note
FROM reviews
WHERE $runs IS NULL OR list_contains($runs, run_id)
ORDER BY run_id, scenario_name, signal, assertion, reviewer
