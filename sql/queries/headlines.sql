-- `Warehouse.headlines()`: one line's facts per run under a policy, the runner's summary's first
-- line and what to read next: whole-run success with its Wilson interval and n, the change from
-- the run before in its group on the paired scenarios (run_changes; labelled in Python as `history`
-- labels it), the judge's errors (and those that alone failed a scenario), the stalled scenarios
-- and the domain with the lowest success rate (more scenarios first on a tie, then by name).
WITH worst AS (
    SELECT run_id, arg_min(domain, (success_rate, -scenarios, domain)) AS worst_domain,
           min(success_rate) AS worst_rate
    FROM rate_rollup
    WHERE policy_id = $policy_id AND domain <> '(all)' AND success_rate IS NOT NULL
    GROUP BY run_id
    HAVING count(*) > 1  -- a run of one domain has no worst one
),
errors AS (
    SELECT run_id, count(*) AS judge_errors, count(*) FILTER (WHERE judge_only) AS judge_only
    FROM judge_errors
    WHERE policy_id = $policy_id
    GROUP BY run_id
)
SELECT a.run_id, r.run_group, r.session_started_at, a.scenarios,
       a.success_passed, a.success_total, a.success_rate, a.success_ci_low, a.success_ci_high,
       p.previous_run, coalesce(c.pairs, 0) AS pairs, coalesce(c.broken, 0) AS broken,
       coalesce(c.fixed, 0) AS fixed,
       coalesce(e.judge_errors, 0) AS judge_errors, coalesce(e.judge_only, 0) AS judge_only, a.stalled,
       w.worst_domain, d.success_passed AS worst_passed, d.success_total AS worst_total, w.worst_rate
FROM rate_rollup AS a
JOIN stg_runs AS r USING (run_id)
JOIN previous_runs AS p USING (run_id)
LEFT JOIN run_changes AS c ON c.run_id = a.run_id AND c.policy_id = a.policy_id AND c.domain = '(all)'
LEFT JOIN errors AS e ON e.run_id = a.run_id
LEFT JOIN worst AS w ON w.run_id = a.run_id
LEFT JOIN rate_rollup AS d ON d.run_id = a.run_id AND d.policy_id = a.policy_id AND d.domain = w.worst_domain
WHERE a.policy_id = $policy_id AND a.domain = '(all)' AND ($run_id IS NULL OR a.run_id = $run_id)
ORDER BY r.session_started_at NULLS FIRST, a.run_id
