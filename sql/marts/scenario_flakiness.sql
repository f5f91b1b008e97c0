-- depends on: scenario_scores
-- How steady each task's composite verdict is across the comparable runs of its group, under each
-- policy: every verdict it got there (each run of the group, and each trial within a run), in
-- session order, while its definition stayed the same (a changed definition starts a new series).
-- `flips`: verdicts unlike the one before; `flaky`: it both passed and failed.
WITH verdicts AS (
    SELECT policy_id, run_group, domain, task_id, definition_hash, run_id, session_started_at, position,
           is_successful
    FROM scenario_scores
    WHERE is_successful IS NOT NULL
),
series AS (
    SELECT *, lag(is_successful) OVER (
               PARTITION BY policy_id, run_group, task_id, definition_hash
               ORDER BY session_started_at NULLS FIRST, run_id, position) AS before
    FROM verdicts
)
SELECT policy_id, run_group, domain, task_id, definition_hash,
       count(*) AS verdicts,
       count(DISTINCT run_id) AS runs,
       count(*) FILTER (WHERE is_successful) AS passed,
       count(*) FILTER (WHERE NOT is_successful) AS failed,
       count(*) FILTER (WHERE before IS NOT NULL AND before <> is_successful) AS flips,
       count(*) FILTER (WHERE before IS NOT NULL AND before <> is_successful) / nullif(count(*) - 1, 0) AS flip_rate,
       count(*) FILTER (WHERE is_successful) > 0 AND count(*) FILTER (WHERE NOT is_successful) > 0 AS flaky
FROM series
GROUP BY ALL
