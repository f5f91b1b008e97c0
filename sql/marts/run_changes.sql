-- depends on: previous_runs, scenario_scores
-- Each run against the run before it in its group (session order), under each policy, per domain
-- and the whole run ('(all)'), paired as `compare` pairs: the scenarios both ran with the same
-- definition and both gave a verdict. `broken`: passed before, failed now; `fixed`: the reverse.
-- `history` labels each change from the exact McNemar test on these pairs (never `regressed`
-- within the noise).
WITH paired AS (
    SELECT o.run_id, o.previous_run, now.policy_id, now.domain,
           earlier.is_successful AS passed_before, now.is_successful AS passed_now
    FROM previous_runs AS o
    JOIN scenario_scores AS now ON now.run_id = o.run_id
    JOIN scenario_scores AS earlier
      ON earlier.run_id = o.previous_run AND earlier.policy_id = now.policy_id
     AND earlier.scenario_name = now.scenario_name
     AND earlier.definition_hash IS NOT DISTINCT FROM now.definition_hash
    WHERE now.is_successful IS NOT NULL AND earlier.is_successful IS NOT NULL
)
SELECT run_id, previous_run, policy_id, coalesce(domain, '(all)') AS domain,
       count(*) AS pairs,
       count(*) FILTER (WHERE passed_before AND NOT passed_now) AS broken,
       count(*) FILTER (WHERE passed_now AND NOT passed_before) AS fixed
FROM paired
GROUP BY GROUPING SETS ((run_id, previous_run, policy_id, domain), (run_id, previous_run, policy_id))
