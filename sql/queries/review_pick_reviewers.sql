-- The scenarios whose reviewers disagree on a signal, an item or the outcome (review_disagreements).
SELECT s.run_id, s.scenario_name,
       'reviewers disagree on ' || string_agg(DISTINCT d.signal || coalesce(' #' || d.assertion, ''), ', ') AS reason,
       true AS gated
FROM scope AS s
JOIN review_disagreements AS d USING (run_id, scenario_name)
GROUP BY s.run_id, s.scenario_name
