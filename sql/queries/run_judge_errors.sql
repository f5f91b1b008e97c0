-- The runs page: per run, its scenarios whose judge (the policy's) failed, and of them those the
-- judge alone failed (a judge outage that reads as an agent failure), as the judge_errors view
-- counts them; the runs' own judge's errors straight from its results (the judgements view is wider).
WITH failed_judge AS (
    SELECT run_id, scenario_name, 'recorded' AS judge FROM stg_judge_results WHERE errored
    UNION ALL
    SELECT run_id, scenario_name, judge FROM judgements
    WHERE judge_error AND judge <> 'recorded' AND judge = (SELECT judge FROM stg_policies WHERE policy_id = $policy_id)
)
SELECT s.run_id, count(*) AS judge_errors,
       count(*) FILTER (WHERE s.is_successful = false AND NOT s.stalled
                              AND list_has_all(['judge_passed', 'nl_assertion'], s.failed)) AS judge_only
FROM scenario_scores AS s
JOIN failed_judge AS f ON f.run_id = s.run_id AND f.scenario_name = s.scenario_name AND f.judge = s.judge
WHERE s.policy_id = $policy_id
GROUP BY s.run_id
ORDER BY s.run_id
