-- `scorelake rates --by scorer`: Inspect AI runs' metrics per run, task and scorer (scorer_metrics).
SELECT run_id, task, scorer, samples, scores, accuracy, mean, stderr
FROM scorer_metrics
WHERE $run_id IS NULL OR run_id = $run_id
ORDER BY run_id, task, ordinal
