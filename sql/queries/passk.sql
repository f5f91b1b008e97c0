-- `scorelake passk`: pass^k of one policy per run group and domain, optionally of one group.
SELECT run_group, domain, k, tasks, pass_hat_k, ci_low, ci_high, claimed_tasks, claimed_pass_hat_k
FROM pass_hat_k
WHERE policy_id = $policy_id AND ($run_group IS NULL OR run_group = $run_group)
ORDER BY run_group, domain, k
