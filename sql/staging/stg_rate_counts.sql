-- depends on: stg_policies, stg_runs
-- The rate_counts table (sums of the scores per run, policy and domain), restricted like
-- stg_scores to each run's committed generation and to stored policies.
SELECT t.*
FROM {{ rate_counts }} AS t
SEMI JOIN stg_runs AS r ON t.run_id = r.run_id AND t.generation = r.generation
SEMI JOIN stg_policies AS p ON t.policy_id = p.policy_id
