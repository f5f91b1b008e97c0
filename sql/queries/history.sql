-- `scorelake history`: one domain's (or the whole run's) composite and task rates across runs,
-- oldest first, with its response latency's p50 and p95, and each run's change from the run before
-- it in its group on the paired scenarios (run_changes; the label is computed from them). Every
-- other rate of run_history is a `scorelake sql` away.
SELECT h.session_started_at, h.run_id, h.run_group, h.scenarios, h.success_passed, h.success_total, h.success_rate,
       h.success_ci_low, h.success_ci_high, h.task_success_rate, h.stalled, l.p50_ms, l.p95_ms,
       c.previous_run, coalesce(c.pairs, 0) AS pairs, coalesce(c.broken, 0) AS broken, coalesce(c.fixed, 0) AS fixed
FROM run_history AS h
LEFT JOIN run_latency AS l ON l.run_id = h.run_id AND l.domain = h.domain
LEFT JOIN run_changes AS c ON c.run_id = h.run_id AND c.policy_id = h.policy_id AND c.domain = h.domain
WHERE h.policy_id = $policy_id AND h.domain = $domain
ORDER BY h.session_started_at, h.run_id
