-- `scorelake export otlp`: the runs whose span was sent to $endpoint under $policy_id already (with any of their scenarios).
SELECT DISTINCT run_id FROM stg_exports WHERE endpoint = $endpoint AND policy_id = $policy_id
