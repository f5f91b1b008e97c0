-- `Warehouse.search()` (`scorelake show --grep`, the viewer's search): the scenarios of run $run_id
-- (or of every run: NULL) whose transcript, judge reason, tool calls (arguments and results) or NL
-- assertions (their text and the judge's reason for each) hold $q, case-insensitively, with where it was found first and the text around it; under the
-- policy $policy_id, in run and scenario order, $limit of them.
WITH needle AS (SELECT lower($q) AS q),
found AS (
    SELECT run_id, scenario_name, 'transcript' AS place, ordinal, text AS haystack
    FROM stg_turns, needle
    WHERE ($run_id IS NULL OR run_id = $run_id) AND contains(lower(text), needle.q)
    UNION ALL
    SELECT run_id, scenario_name, 'judge reason' AS place, 0 AS ordinal, reason AS haystack
    FROM stg_judge_results, needle
    WHERE ($run_id IS NULL OR run_id = $run_id) AND contains(lower(reason), needle.q)
    UNION ALL
    SELECT run_id, scenario_name, 'tool call ' || name AS place, ordinal,
           arguments_json || ' -> ' || coalesce(result, '') AS haystack
    FROM stg_tool_calls, needle
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND (contains(lower(arguments_json), needle.q) OR contains(lower(result), needle.q))
    UNION ALL
    SELECT run_id, scenario_name, 'NL assertion ' || ordinal AS place, ordinal,
           label || coalesce(' -> ' || detail, '') AS haystack
    FROM stg_verdicts, needle
    WHERE kind = 'nl_assertion' AND ($run_id IS NULL OR run_id = $run_id)
      AND (contains(lower(label), needle.q) OR contains(lower(detail), needle.q))
),
first AS (
    SELECT run_id, scenario_name, count(*) AS hits,
           arg_min(place, (place <> 'transcript', ordinal)) AS place,
           arg_min(haystack, (place <> 'transcript', ordinal)) AS haystack
    FROM found
    GROUP BY ALL
)
SELECT f.run_id, f.scenario_name, s.domain, s.is_successful, f.hits, f.place,
       CASE WHEN strpos(lower(f.haystack), (SELECT q FROM needle)) > 60
            THEN '…' || substr(f.haystack, strpos(lower(f.haystack), (SELECT q FROM needle)) - 60, 160)
            ELSE substr(f.haystack, 1, 160) END AS snippet
FROM first AS f
JOIN scenario_scores AS s ON s.run_id = f.run_id AND s.scenario_name = f.scenario_name AND s.policy_id = $policy_id
ORDER BY f.run_id, s.position
LIMIT $limit
