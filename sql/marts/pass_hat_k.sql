-- depends on: scenario_scores
-- tau2's pass^k per run group (the runs that are trials of one system), domain and policy:
-- the mean over tasks of C(c, k) / C(n, k), for k = 1 .. the smallest number of trials of any
-- task (a factor c - i reaches 0 when c < k, so the product is C(c, k) / C(n, k) exactly).
-- `pass_hat_k` counts scorelake's recomputed composite as success (N/A trials left out);
-- `claimed_pass_hat_k` the source's own verdict (tau2 / tau-bench reward, metrics.is_successful).
-- The interval is Wilson's on pass^k with tasks as the count: pass^k is a mean of per-task
-- ratios, not a binomial proportion, so read it as approximate.
WITH tasks AS (
    SELECT policy_id, run_group, domain, task_id,
           count(is_successful) AS n, count(*) FILTER (WHERE is_successful) AS c,
           count(claimed_success) AS n_claimed, count(*) FILTER (WHERE claimed_success) AS c_claimed
    FROM scenario_scores
    GROUP BY ALL
),
bounds AS (
    SELECT policy_id, run_group, domain,
           min(n) FILTER (WHERE n > 0) AS max_k,
           min(n_claimed) FILTER (WHERE n_claimed > 0) AS max_k_claimed
    FROM tasks
    GROUP BY ALL
),
ks AS (
    SELECT policy_id, run_group, domain, max_k, max_k_claimed,
           unnest(range(1, greatest(coalesce(max_k, 0), coalesce(max_k_claimed, 0)) + 1)) AS k
    FROM bounds
),
per_task AS (
    SELECT ks.policy_id, ks.run_group, ks.domain, ks.k,
           CASE WHEN ks.k <= ks.max_k AND t.n > 0 THEN list_reduce(
               list_transform(range(ks.k), lambda i: (t.c - i) / (t.n - i)), lambda a, b: a * b) END AS ratio,
           CASE WHEN ks.k <= ks.max_k_claimed AND t.n_claimed > 0 THEN list_reduce(
               list_transform(range(ks.k), lambda i: (t.c_claimed - i) / (t.n_claimed - i)),
               lambda a, b: a * b) END AS claimed_ratio
    FROM ks
    JOIN tasks AS t USING (policy_id, run_group, domain)
)
SELECT policy_id, run_group, domain, k,
       count(ratio) AS tasks,
       avg(ratio) AS pass_hat_k,
       wilson_low(sum(ratio), count(ratio)) AS ci_low,
       wilson_high(sum(ratio), count(ratio)) AS ci_high,
       count(claimed_ratio) AS claimed_tasks,
       avg(claimed_ratio) AS claimed_pass_hat_k
FROM per_task
GROUP BY ALL
ORDER BY run_group, domain, policy_id, k
