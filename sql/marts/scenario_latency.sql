-- depends on: stg_judgements, stg_runs, stg_scenarios, stg_turns
-- Per run and scenario: the agent's response latencies (metrics.json latencies: from the user's last
-- audio frame to the agent's first; `exchanges` measured) as the runner computes its percentiles
-- (sorted values, index int(n * q), no interpolation: p50 and p95 equal all_summary.txt's), the
-- first response's latency, interrupted agent turns (the transcript's [INTERRUPTED]) and their rate
-- per agent turn, duration, turns, and tokens per side (the judges: every judgement scorelake asked).
-- A metric a source does not record is NULL, never zero (tau2 / tau-bench record no latency, no interruption).
WITH turns AS (
    SELECT run_id, scenario_name,
           count(*) FILTER (WHERE role = 'agent') AS agent_turns,
           count(*) FILTER (WHERE role = 'agent' AND text = '[INTERRUPTED]') AS interrupted
    FROM stg_turns
    GROUP BY ALL
),
judged AS (
    SELECT run_id, scenario_name, sum(prompt_tokens)::BIGINT AS judge_prompt_tokens,
           sum(completion_tokens)::BIGINT AS judge_completion_tokens
    FROM stg_judgements
    WHERE source = 'asked'
    GROUP BY ALL
),
measured AS (
    SELECT run_id, scenario_name, domain, position, source, scenario_duration, total_turns,
           agent_prompt_tokens, agent_completion_tokens, user_prompt_tokens, user_completion_tokens,
           -- only the voice-agent runner measures response latency and marks interruptions
           CASE WHEN source = 'nemo' THEN list_sort(coalesce(latency_ms, [])) END AS sorted_ms,
           latency_ms[1] AS first_response_ms
    FROM stg_scenarios AS s
    JOIN (SELECT run_id, generation, source FROM stg_runs) USING (run_id, generation)
)
SELECT m.run_id, m.scenario_name, m.domain, m.source,
       len(m.sorted_ms) AS exchanges,
       list_avg(m.sorted_ms) AS mean_ms,
       m.sorted_ms[floor(len(m.sorted_ms) * 0.50)::BIGINT + 1] AS p50_ms,
       m.sorted_ms[floor(len(m.sorted_ms) * 0.90)::BIGINT + 1] AS p90_ms,
       m.sorted_ms[floor(len(m.sorted_ms) * 0.95)::BIGINT + 1] AS p95_ms,
       m.sorted_ms[floor(len(m.sorted_ms) * 0.99)::BIGINT + 1] AS p99_ms,
       list_max(m.sorted_ms) AS max_ms,
       m.first_response_ms,
       t.agent_turns, CASE WHEN m.source = 'nemo' THEN t.interrupted END AS interrupted,
       CASE WHEN m.source = 'nemo' THEN t.interrupted / nullif(t.agent_turns, 0) END AS interrupted_rate,
       m.scenario_duration AS duration_s, m.total_turns AS turns,
       m.agent_prompt_tokens, m.agent_completion_tokens, m.user_prompt_tokens, m.user_completion_tokens,
       j.judge_prompt_tokens, j.judge_completion_tokens,
       m.sorted_ms AS latencies_ms, m.position
FROM measured AS m
LEFT JOIN turns AS t USING (run_id, scenario_name)
LEFT JOIN judged AS j USING (run_id, scenario_name)
