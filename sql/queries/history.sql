-- `scorelake history`: one domain's (or the whole run's) composite and task rates across runs,
-- oldest first; every other rate of run_history is a `scorelake sql` away.
SELECT session_started_at, run_id, scenarios, success_passed, success_total, success_rate,
       success_ci_low, success_ci_high, task_success_rate, stalled
FROM run_history
WHERE policy_id = $policy_id AND domain = $domain
ORDER BY session_started_at, run_id
