-- $per_domain scenarios per domain drawn at random, the same for the same $seed.
SELECT run_id, scenario_name, 'sample' AS reason, true AS gated
FROM scope
QUALIFY row_number() OVER (PARTITION BY domain ORDER BY hash($seed, run_id, scenario_name), run_id, scenario_name)
    <= $per_domain
