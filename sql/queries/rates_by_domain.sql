-- `scorelake rates --by domain`: the per-domain rates of one policy, optionally of one run: the
-- composite, task success and every signal's rate, each with its counts, and the signals that gate
-- success in the domain (its whitelist).
SELECT run_id, domain, scenarios,
       success_passed, success_total, success_rate,
       task_passed, task_total, task_success_rate,
       action_match_passed, action_match_total, action_match_rate,
       db_state_match_passed, db_state_match_total, db_state_match_rate,
       db_state_assertion_passed, db_state_assertion_total, db_state_assertion_rate,
       nl_assertion_passed, nl_assertion_total, nl_assertion_rate,
       judge_passed_passed, judge_passed_total, judge_passed_rate,
       clean_exit_passed, clean_exit_total, clean_exit_rate,
       communicate_passed, communicate_total, communicate_rate,
       stalled, gating_signals
FROM domain_rates
WHERE policy_id = $policy_id AND ($run_id IS NULL OR run_id = $run_id)
ORDER BY run_id, domain
