-- depends on: stg_reviews, stg_scenarios
-- Every review ever made, with the scenario's domain and whether the row is its reviewer's verdict
-- that stands for its key (run, scenario, signal, assertion): the reviewer's latest row of the key,
-- unless that is a withdrawal (a reviewer's later review supersedes only their own).
SELECT r.review_id, r.run_id, r.scenario_name, s.domain, r.signal, r.assertion, r.verdict, r.reviewer, r.note,
       r.reviewed_at, r.warehouse_version,
       row_number() OVER (PARTITION BY r.run_id, r.scenario_name, r.signal, r.assertion, r.reviewer
                          ORDER BY r.reviewed_at DESC, r.review_id DESC) = 1
           AND r.verdict <> 'withdrawn' AS standing
FROM stg_reviews AS r
LEFT JOIN stg_scenarios AS s USING (run_id, scenario_name)
