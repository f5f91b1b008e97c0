-- depends on: scenario_scores
-- tau2 simulations whose own reward disagrees with the reward recomputed from their checks
-- (product over the reward basis, gated on a normal end), or whose basis names a check the
-- simulation does not record. Scored under the runs' own flags (the `recorded` policy).
SELECT
    run_id, scenario_name, domain, task_id, task_id_claimed, reward_basis, basis_checks_missing,
    claimed_reward, reward,
    CASE WHEN len(basis_checks_missing) > 0 THEN 'basis names a check that is not present'
         ELSE 'reward disagrees with its checks' END AS reason
FROM scenario_scores
WHERE policy_name = 'recorded' AND reward_basis IS NOT NULL
  AND (len(basis_checks_missing) > 0 OR claimed_reward IS NULL OR reward IS NULL
       OR abs(reward - claimed_reward) > 1e-6)
ORDER BY run_id, scenario_name
