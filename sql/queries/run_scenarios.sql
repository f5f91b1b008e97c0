-- `Warehouse.run_scenarios()` (`scorelake show RUN --failed`, the run page of `scorelake view`): a
-- run's scenarios under one policy, filtered (failed only, one domain, one failed signal), sorted
-- and paged in DuckDB, with the total the filters leave.
SELECT scenario_name, domain, position, is_successful, is_task_successful, stalled, failed, passed,
       not_applicable, judge_score, agent_turns, stop_reason, count(*) OVER () AS matching
FROM scenario_scores
WHERE run_id = $run_id AND policy_id = $policy_id
  AND (NOT $failed_only OR is_successful IS DISTINCT FROM true AND is_successful IS NOT NULL)
  AND ($domain IS NULL OR domain = $domain)
  AND ($signal IS NULL OR list_contains(failed, $signal) OR ($signal = 'stalled' AND stalled))
ORDER BY
    CASE WHEN $sort = 'name' THEN scenario_name END,
    CASE WHEN $sort = 'domain' THEN domain END,
    CASE WHEN $sort = 'judge_score' THEN judge_score END NULLS LAST,
    CASE WHEN $sort = 'agent_turns' THEN agent_turns END NULLS LAST,
    CASE WHEN $sort = 'outcome' THEN coalesce(is_successful::INT, 2) END,
    position
LIMIT $limit OFFSET $offset
