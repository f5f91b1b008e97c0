-- `scorelake rates --by signal`: the per-signal rates of one policy, optionally of one run.
SELECT run_id, signal, unit, passed, total, rate
FROM signal_rates
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, signal_order
