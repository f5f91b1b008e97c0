-- depends on: scenario_latency
-- Per run and domain, and the whole run (`domain = '(all)'`): the response latencies of its
-- scenarios pooled and sorted, with the runner's percentiles (index int(n * q); the whole run's p50
-- and p95 are all_summary.txt's Overall Latency Statistics), the first responses' median, interrupted
-- agent turns and their rate, durations, turns and tokens per side.
WITH pooled AS (
    SELECT run_id, coalesce(domain, '(all)') AS domain,
           count(*) AS scenarios,
           list_sort(flatten(list(latencies_ms) FILTER (WHERE latencies_ms IS NOT NULL))) AS sorted_ms,
           bool_or(latencies_ms IS NOT NULL) AS recorded,
           list_sort(list(first_response_ms) FILTER (WHERE first_response_ms IS NOT NULL)) AS firsts,
           sum(interrupted)::BIGINT AS interrupted, sum(agent_turns)::BIGINT AS agent_turns,
           avg(duration_s) AS mean_duration_s, sum(turns)::BIGINT AS turns,
           sum(agent_prompt_tokens)::BIGINT AS agent_prompt_tokens,
           sum(agent_completion_tokens)::BIGINT AS agent_completion_tokens,
           sum(user_prompt_tokens)::BIGINT AS user_prompt_tokens,
           sum(user_completion_tokens)::BIGINT AS user_completion_tokens,
           sum(judge_prompt_tokens)::BIGINT AS judge_prompt_tokens,
           sum(judge_completion_tokens)::BIGINT AS judge_completion_tokens
    FROM scenario_latency
    GROUP BY GROUPING SETS ((run_id, domain), (run_id))
)
SELECT run_id, domain, scenarios,
       CASE WHEN recorded THEN len(sorted_ms) END AS exchanges,
       list_avg(sorted_ms) AS mean_ms,
       sorted_ms[floor(len(sorted_ms) * 0.50)::BIGINT + 1] AS p50_ms,
       sorted_ms[floor(len(sorted_ms) * 0.90)::BIGINT + 1] AS p90_ms,
       sorted_ms[floor(len(sorted_ms) * 0.95)::BIGINT + 1] AS p95_ms,
       sorted_ms[floor(len(sorted_ms) * 0.99)::BIGINT + 1] AS p99_ms,
       list_max(sorted_ms) AS max_ms,
       firsts[floor(len(firsts) * 0.50)::BIGINT + 1] AS first_response_p50_ms,
       interrupted, interrupted / nullif(agent_turns, 0) AS interrupted_rate, agent_turns,
       mean_duration_s, turns, agent_prompt_tokens, agent_completion_tokens, user_prompt_tokens,
       user_completion_tokens, judge_prompt_tokens, judge_completion_tokens
FROM pooled
