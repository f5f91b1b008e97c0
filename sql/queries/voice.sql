-- `scorelake voice`: per run and domain (the whole run last) of the runs $runs (a list, or NULL for all).
SELECT *
FROM run_voice
WHERE $runs IS NULL OR list_contains($runs, run_id)
ORDER BY run_id, domain = '(all)', domain
