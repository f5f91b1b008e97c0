-- `rates --calibrated`: per run, the policy's JUDGE_PASSED verdicts against people's (the latest
-- standing review of judge_passed per scenario) on the scenarios both gave one, stalled ones left
-- out as every per-signal rate leaves them out.
SELECT s.run_id,
       count(*) FILTER (WHERE p.passed AND s.judge_passed) AS both_pass,
       count(*) FILTER (WHERE p.passed AND NOT s.judge_passed) AS judge_fails,
       count(*) FILTER (WHERE NOT p.passed AND NOT s.judge_passed) AS both_fail,
       count(*) FILTER (WHERE NOT p.passed AND s.judge_passed) AS judge_passes
FROM scenario_scores AS s
JOIN judge_labels AS p USING (run_id, scenario_name)
WHERE s.policy_id = $policy_id AND s.judge_passed IS NOT NULL AND NOT s.stalled
  AND ($run_id IS NULL OR s.run_id = $run_id)
GROUP BY s.run_id
