-- `scorelake rates --by domain`: the per-domain rates of one policy, optionally of one run.
SELECT run_id, domain, scenarios,
       success_passed, success_total, success_rate,
       task_passed, task_total, task_success_rate,
       db_state_match_passed, db_state_match_total, db_state_match_rate,
       db_state_assertion_passed, db_state_assertion_total, db_state_assertion_rate,
       nl_assertion_passed, nl_assertion_total, nl_assertion_rate,
       stalled
FROM domain_rates
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, domain
