-- `scorelake history`: one domain's (or the whole run's) composite and task rates across runs,
-- oldest first, with its response latency's p50 and p95; every other rate of run_history is a
-- `scorelake sql` away.
SELECT h.session_started_at, h.run_id, h.scenarios, h.success_passed, h.success_total, h.success_rate,
       h.success_ci_low, h.success_ci_high, h.task_success_rate, h.stalled, l.p50_ms, l.p95_ms
FROM run_history AS h
LEFT JOIN run_latency AS l ON l.run_id = h.run_id AND l.domain = h.domain
WHERE h.policy_id = $policy_id AND h.domain = $domain
ORDER BY h.session_started_at, h.run_id
