-- `scorelake policies`: every stored policy, the built-in `recorded` first, then as they were defined.
SELECT policy_id, name, judge, reviews, spec_json FROM stg_policies
ORDER BY name <> 'recorded', created_at
