-- Every rate of a run and policy, per domain bucket and over the whole run (domain = '(all)'),
-- each with its runner denominator and a Wilson 95% interval, added up from rate_counts (where
-- stalled scenarios are already failures in the composite and task rates and skipped in every
-- per-signal rate, as in all_summary.txt), with the signals that gate success there.
WITH counts AS (
    -- rate_counts rows are one per run, policy and domain already: only the whole-run row is a sum
    SELECT * EXCLUDE (generation, judge_score_sum), judge_score_sum / nullif(judge_scored, 0) AS judge_score_mean
    FROM stg_rate_counts
    UNION ALL BY NAME
    SELECT
        run_id,
        policy_id,
        '(all)' AS domain,
        CAST(sum(COLUMNS(* EXCLUDE (run_id, generation, policy_id, domain, judge_score_sum, gating_signals))) AS BIGINT),
        sum(judge_score_sum) / nullif(sum(judge_scored), 0) AS judge_score_mean,
        list_sort(list_distinct(flatten(list(gating_signals)))) AS gating_signals
    FROM stg_rate_counts
    GROUP BY run_id, policy_id
)
SELECT
    run_id, policy_id, p.name AS policy_name, p.judge, domain, scenarios, stalled,
    success_passed, success_total, success_passed / nullif(success_total, 0) AS success_rate,
    wilson_low(success_passed, success_total) AS success_ci_low,
    wilson_high(success_passed, success_total) AS success_ci_high,
    task_passed, task_total, task_passed / nullif(task_total, 0) AS task_success_rate,
    wilson_low(task_passed, task_total) AS task_ci_low,
    wilson_high(task_passed, task_total) AS task_ci_high,
    action_match_passed, action_match_total, action_match_passed / nullif(action_match_total, 0) AS action_match_rate,
    wilson_low(action_match_passed, action_match_total) AS action_match_ci_low,
    wilson_high(action_match_passed, action_match_total) AS action_match_ci_high,
    db_state_match_passed, db_state_match_total,
    db_state_match_passed / nullif(db_state_match_total, 0) AS db_state_match_rate,
    wilson_low(db_state_match_passed, db_state_match_total) AS db_state_match_ci_low,
    wilson_high(db_state_match_passed, db_state_match_total) AS db_state_match_ci_high,
    db_state_assertion_passed, db_state_assertion_total,
    db_state_assertion_passed / nullif(db_state_assertion_total, 0) AS db_state_assertion_rate,
    wilson_low(db_state_assertion_passed, db_state_assertion_total) AS db_state_assertion_ci_low,
    wilson_high(db_state_assertion_passed, db_state_assertion_total) AS db_state_assertion_ci_high,
    nl_assertion_passed, nl_assertion_total, nl_assertion_passed / nullif(nl_assertion_total, 0) AS nl_assertion_rate,
    wilson_low(nl_assertion_passed, nl_assertion_total) AS nl_assertion_ci_low,
    wilson_high(nl_assertion_passed, nl_assertion_total) AS nl_assertion_ci_high,
    judge_passed_passed, judge_passed_total, judge_passed_passed / nullif(judge_passed_total, 0) AS judge_passed_rate,
    wilson_low(judge_passed_passed, judge_passed_total) AS judge_passed_ci_low,
    wilson_high(judge_passed_passed, judge_passed_total) AS judge_passed_ci_high,
    clean_exit_passed, clean_exit_total, clean_exit_passed / nullif(clean_exit_total, 0) AS clean_exit_rate,
    wilson_low(clean_exit_passed, clean_exit_total) AS clean_exit_ci_low,
    wilson_high(clean_exit_passed, clean_exit_total) AS clean_exit_ci_high,
    communicate_passed, communicate_total, communicate_passed / nullif(communicate_total, 0) AS communicate_rate,
    wilson_low(communicate_passed, communicate_total) AS communicate_ci_low,
    wilson_high(communicate_passed, communicate_total) AS communicate_ci_high,
    judge_score_mean, judge_scored, agent_tokens, user_tokens,
    gating_signals  -- the signals that gate success (the whitelists); NULL for counts an older scorelake wrote
FROM counts
LEFT JOIN stg_policies AS p USING (policy_id)
