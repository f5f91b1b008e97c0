-- `scorelake compare`: both runs' composite rate per domain and overall, with Wilson bounds.
SELECT domain, run_id, success_passed AS passed, success_total AS total, success_rate AS rate,
       success_ci_low AS ci_low, success_ci_high AS ci_high
FROM rate_rollup
WHERE policy_id = $policy_id AND run_id IN ($run_a, $run_b)
ORDER BY domain = '(all)', domain, run_id
