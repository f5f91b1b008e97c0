-- The slowest exchanges of run $run_id: each agent turn with a response latency, the user turn it
-- answered (when the turn before it is the user's), slowest first, $limit of them.
WITH ordered AS (
    SELECT run_id, generation, scenario_name, ordinal, role, text, latency_ms,
           lag(role) OVER w AS before_role, lag(text) OVER w AS before_text
    FROM stg_turns
    WHERE run_id = $run_id
    WINDOW w AS (PARTITION BY scenario_name ORDER BY ordinal)
)
SELECT o.scenario_name, s.domain, o.ordinal, o.latency_ms,
       CASE WHEN o.before_role = 'user' THEN o.before_text END AS user_text, o.text AS agent_text
FROM ordered AS o
JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
WHERE o.latency_ms IS NOT NULL
ORDER BY o.latency_ms DESC, s.position, o.ordinal
LIMIT $limit
