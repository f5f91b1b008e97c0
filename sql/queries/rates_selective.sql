-- `rates --selective`: per run and domain (the whole run first), the verdicts of the policy's judge
-- that its calibration keeps and those it escalates to people: the kept verdicts' pass rate with
-- its Wilson interval, the coverage (the share kept) and, beside them, the judge's rate over all.
WITH verdicts AS (
    SELECT e.run_id, e.domain, e.passed, e.kept
    FROM judge_escalations AS e
    JOIN stg_policies AS p ON p.judge = e.judge
    WHERE p.policy_id = $policy_id AND ($run_id IS NULL OR e.run_id = $run_id)
),
counted AS (
    SELECT run_id, coalesce(domain, '(all)') AS domain, count(*) AS judged,
           count(*) FILTER (WHERE kept) AS kept, count(*) FILTER (WHERE NOT kept) AS escalated,
           count(*) FILTER (WHERE kept AND passed) AS kept_passed, count(*) FILTER (WHERE passed) AS judge_passed
    FROM verdicts
    GROUP BY GROUPING SETS ((run_id, domain), (run_id))
)
SELECT run_id, domain, judged, kept, escalated, kept / judged AS coverage, kept_passed,
       kept_passed / nullif(kept, 0) AS kept_rate, wilson_low(kept_passed, kept) AS kept_ci_low,
       wilson_high(kept_passed, kept) AS kept_ci_high, judge_passed / judged AS judge_rate
FROM counted
ORDER BY run_id, domain <> '(all)', domain
