-- `scorelake rates --by domain`: the per-domain rates of one policy, optionally of one run: the
-- composite, task success and every signal's rate, each with its counts, and the signals that gate
-- success in the domain (its whitelist).
SELECT run_id, domain, scenarios,
       {{ rate_list }},  -- each declared rate (transforms/registry.py RATES)
       stalled, gating_signals
FROM domain_rates
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, domain
