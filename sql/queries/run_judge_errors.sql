-- The runs page: per run, its scenarios whose judge (the policy's) failed, and of them those the
-- judge alone failed (a judge outage that reads as an agent failure), as the judge_errors view
-- counts them.
SELECT s.run_id, count(*) AS judge_errors,
       count(*) FILTER (WHERE s.is_successful = false AND NOT s.stalled
                              AND list_has_all(['judge_passed', 'nl_assertion'], s.failed)) AS judge_only
FROM scenario_scores AS s
JOIN judge_failures AS f ON f.run_id = s.run_id AND f.scenario_name = s.scenario_name AND f.judge = s.judge
WHERE s.policy_id = $policy_id
GROUP BY s.run_id
ORDER BY s.run_id
