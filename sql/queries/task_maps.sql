-- The task maps declared (`compare --map`): each with its pairs and when it was declared.
SELECT map_name, count(*) AS pairs, max(declared_at) AS declared_at
FROM stg_task_maps
WHERE $map_name IS NULL OR map_name = $map_name
GROUP BY map_name
ORDER BY map_name
