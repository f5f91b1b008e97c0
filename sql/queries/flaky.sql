-- `scorelake flaky`: the tasks whose verdict both passed and failed across the comparable runs
-- (and trials) of their group under $policy_id, most often flipping first; of one group ($run_group),
-- or of the group of $run_id and run in it (`scenarios`: its scenarios of the task), or of every
-- group (both NULL).
WITH in_run AS (
    SELECT task_id, run_group, definition_hash, list(scenario_name ORDER BY position) AS scenarios
    FROM scenario_scores
    WHERE run_id = $run_id AND policy_id = $policy_id
    GROUP BY ALL
)
SELECT f.run_group, f.domain, f.task_id, f.verdicts, f.runs, f.passed, f.failed, f.flips, f.flip_rate,
       r.scenarios
FROM scenario_flakiness AS f
LEFT JOIN in_run AS r
  ON r.task_id = f.task_id AND r.run_group IS NOT DISTINCT FROM f.run_group
 AND r.definition_hash IS NOT DISTINCT FROM f.definition_hash
WHERE f.policy_id = $policy_id AND f.flaky AND f.verdicts >= $min_verdicts
  AND ($run_group IS NULL OR f.run_group IS NOT DISTINCT FROM $run_group)
  AND ($run_id IS NULL OR r.task_id IS NOT NULL)
ORDER BY f.flip_rate DESC, f.flips DESC, f.run_group, f.domain, f.task_id
