-- depends on: stg_policies, stg_rate_counts
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
    {{ rate_columns }},  -- each rate (transforms/registry.py RATES): counts, rate, Wilson interval
    judge_score_mean, judge_scored, agent_tokens, user_tokens,
    gating_signals  -- the signals that gate success (the whitelists); NULL for counts an older scorelake wrote
FROM counts
LEFT JOIN stg_policies AS p USING (policy_id)
