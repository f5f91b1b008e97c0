-- Per run, policy and domain bucket: the composite and task success rates and every per-signal
-- rate with the runner's own denominator (stalled scenarios skipped in the per-signal rates).
SELECT
    run_id,
    policy_id,
    any_value(policy_name) AS policy_name,
    domain,
    count(*) AS scenarios,
    count(is_successful) AS success_total,
    count(*) FILTER (WHERE is_successful) AS success_passed,
    count(*) FILTER (WHERE is_successful) / nullif(count(is_successful), 0) AS success_rate,
    count(is_task_successful) AS task_total,
    count(*) FILTER (WHERE is_task_successful) AS task_passed,
    count(*) FILTER (WHERE is_task_successful) / nullif(count(is_task_successful), 0) AS task_success_rate,
    count(is_action_match) FILTER (WHERE NOT stalled) AS action_match_total,
    count(*) FILTER (WHERE NOT stalled AND is_action_match) AS action_match_passed,
    count(*) FILTER (WHERE NOT stalled AND is_action_match)
        / nullif(count(is_action_match) FILTER (WHERE NOT stalled), 0) AS action_match_rate,
    count(db_state_match) FILTER (WHERE NOT stalled) AS db_state_match_total,
    count(*) FILTER (WHERE NOT stalled AND db_state_match) AS db_state_match_passed,
    count(*) FILTER (WHERE NOT stalled AND db_state_match)
        / nullif(count(db_state_match) FILTER (WHERE NOT stalled), 0) AS db_state_match_rate,
    coalesce(sum(dbsa_total) FILTER (WHERE NOT stalled), 0) AS db_state_assertion_total,
    coalesce(sum(dbsa_passed) FILTER (WHERE NOT stalled), 0) AS db_state_assertion_passed,
    sum(dbsa_passed) FILTER (WHERE NOT stalled)
        / nullif(sum(dbsa_total) FILTER (WHERE NOT stalled), 0) AS db_state_assertion_rate,
    coalesce(sum(nl_total) FILTER (WHERE NOT stalled), 0) AS nl_assertion_total,
    coalesce(sum(nl_passed) FILTER (WHERE NOT stalled), 0) AS nl_assertion_passed,
    sum(nl_passed) FILTER (WHERE NOT stalled)
        / nullif(sum(nl_total) FILTER (WHERE NOT stalled), 0) AS nl_assertion_rate,
    count(judge_passed) FILTER (WHERE NOT stalled) AS judge_passed_total,
    count(*) FILTER (WHERE NOT stalled AND judge_passed) AS judge_passed_passed,
    count(*) FILTER (WHERE NOT stalled AND judge_passed)
        / nullif(count(judge_passed) FILTER (WHERE NOT stalled), 0) AS judge_passed_rate,
    avg(judge_score) FILTER (WHERE NOT stalled) AS judge_score_mean,
    count(clean_exit) FILTER (WHERE NOT stalled) AS clean_exit_total,
    count(*) FILTER (WHERE NOT stalled AND clean_exit) AS clean_exit_passed,
    count(*) FILTER (WHERE NOT stalled AND clean_exit)
        / nullif(count(clean_exit) FILTER (WHERE NOT stalled), 0) AS clean_exit_rate,
    count(*) FILTER (WHERE stalled) AS stalled
FROM scenario_scores
GROUP BY run_id, policy_id, domain
