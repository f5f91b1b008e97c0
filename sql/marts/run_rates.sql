-- Headline numbers per run and policy, as all_summary.txt counts them: stalled scenarios are
-- failures in the composite and task rates; "N/A" scenarios leave both denominators.
SELECT
    run_id,
    any_value(session_started_at) AS session_started_at,
    policy_id,
    any_value(policy_name) AS policy_name,
    count(*) AS scenarios,
    count(is_successful) AS success_total,
    count(*) FILTER (WHERE is_successful) AS success_passed,
    count(*) FILTER (WHERE is_successful) / nullif(count(is_successful), 0) AS success_rate,
    count(is_task_successful) AS task_total,
    count(*) FILTER (WHERE is_task_successful) AS task_passed,
    count(*) FILTER (WHERE is_task_successful) / nullif(count(is_task_successful), 0) AS task_success_rate,
    count(*) FILTER (WHERE stalled) AS stalled,
    avg(judge_score) FILTER (WHERE NOT stalled) AS judge_score_mean,
    count(judge_score) FILTER (WHERE NOT stalled) AS judge_scored,
    sum(agent_prompt_tokens + agent_completion_tokens) AS agent_tokens,
    sum(user_prompt_tokens + user_completion_tokens) AS user_tokens
FROM scenario_scores
GROUP BY run_id, policy_id
