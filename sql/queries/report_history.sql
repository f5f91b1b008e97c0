-- `scorelake report`: every domain's composite rate per run under one policy, with each run's
-- change from the run before it in its group on the paired scenarios (run_changes; labelled by the caller).
SELECT h.*, c.previous_run, coalesce(c.broken, 0) AS broken, coalesce(c.fixed, 0) AS fixed
FROM run_history AS h
LEFT JOIN run_changes AS c ON c.run_id = h.run_id AND c.policy_id = h.policy_id AND c.domain = h.domain
WHERE h.policy_id = $policy_id AND h.domain <> '(all)'
