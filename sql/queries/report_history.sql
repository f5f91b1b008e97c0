-- `scorelake report`: every domain's composite rate per run under one policy.
SELECT * FROM run_history WHERE policy_id = $policy_id AND domain <> '(all)'
