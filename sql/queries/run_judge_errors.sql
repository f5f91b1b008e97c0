-- The runs page: per run, its scenarios whose judge (the policy's) failed, and of them those the
-- judge alone failed (a judge outage that reads as an agent failure).
SELECT run_id, count(*) AS judge_errors, count(*) FILTER (WHERE judge_only) AS judge_only
FROM judge_errors
WHERE policy_id = $policy_id
GROUP BY run_id
ORDER BY run_id
