-- A stored policy by name or id.
SELECT policy_id, name, judge, reviews, spec_json FROM stg_policies
WHERE name = $policy OR policy_id = $policy
ORDER BY created_at DESC
LIMIT 1
