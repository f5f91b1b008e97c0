-- Task maps (`scorelake compare --map FILE`): which scenario of one harness's runs is which of
-- another's, as the latest declaration of each map gives it.
SELECT map_name, a, b, declared_at
FROM {{ task_maps }}
QUALIFY declared_at = max(declared_at) OVER (PARTITION BY map_name)
