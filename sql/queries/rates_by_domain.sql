-- `scorelake rates --by domain`: the rates of one policy per run, the whole run first (domain
-- '(all)') and then each domain, optionally of one run: the composite, task success and every
-- signal's rate, each with its counts, and the signals that gate success there (the whitelists).
SELECT run_id, domain, scenarios,
       {{ rate_list }},  -- each declared rate (transforms/registry.py RATES)
       stalled, gating_signals
FROM rate_rollup
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, domain <> '(all)', domain
