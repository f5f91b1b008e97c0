-- `scorelake reviews`: the standing reviews (or, with $history, every row), of $run or of all runs.
SELECT * FROM review_history
WHERE ($run IS NULL OR run_id = $run) AND ($history OR standing)
ORDER BY run_id, scenario_name, signal, assertion NULLS FIRST, reviewed_at, review_id
