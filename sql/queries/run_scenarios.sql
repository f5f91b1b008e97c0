-- `Warehouse.run_scenarios()` (`scorelake show RUN --failed`, the run page of `scorelake view`): a
-- run's scenarios under one policy, filtered (failed only, one domain, one failed signal, a phrase
-- $q in the transcript, judge reason or tool calls), sorted and paged in DuckDB, with the total the
-- filters leave; `judge_error`: the policy's judge failed on it (upstream scored that 0.0).
WITH judge_failed AS (
    SELECT scenario_name, judge FROM judge_failures WHERE run_id = $run_id
),
mentioning AS (
    SELECT scenario_name FROM stg_turns WHERE $q IS NOT NULL AND run_id = $run_id AND contains(lower(text), lower($q))
    UNION
    SELECT scenario_name FROM stg_judge_results
    WHERE $q IS NOT NULL AND run_id = $run_id AND contains(lower(reason), lower($q))
    UNION
    SELECT scenario_name FROM stg_tool_calls
    WHERE $q IS NOT NULL AND run_id = $run_id
      AND (contains(lower(arguments_json), lower($q)) OR contains(lower(result), lower($q)))
)
SELECT s.scenario_name, domain, position, is_successful, is_task_successful, stalled, failed, passed,
       not_applicable, judge_score, agent_turns, stop_reason, j.scenario_name IS NOT NULL AS judge_error,
       count(*) OVER () AS matching
FROM scenario_scores AS s
LEFT JOIN judge_failed AS j ON j.scenario_name = s.scenario_name AND j.judge = s.judge
WHERE run_id = $run_id AND policy_id = $policy_id
  AND ($q IS NULL OR s.scenario_name IN (SELECT scenario_name FROM mentioning))
  AND (NOT $failed_only OR is_successful IS DISTINCT FROM true AND is_successful IS NOT NULL)
  AND ($domain IS NULL OR domain = $domain)
  AND ($signal IS NULL OR list_contains(failed, $signal) OR ($signal = 'stalled' AND stalled))
ORDER BY
    CASE WHEN $sort = 'name' THEN s.scenario_name END,
    CASE WHEN $sort = 'domain' THEN domain END,
    CASE WHEN $sort = 'judge_score' THEN judge_score END NULLS LAST,
    CASE WHEN $sort = 'agent_turns' THEN agent_turns END NULLS LAST,
    CASE WHEN $sort = 'outcome' THEN coalesce(is_successful::INT, 2) END,
    position
LIMIT $limit OFFSET $offset
