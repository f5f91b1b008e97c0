-- depends on: reviews
-- The keys (run, scenario, signal, assertion) whose reviewers' standing verdicts differ: who said
-- pass, who said fail. The review queue's "reviewers disagree" pick, and where an adjudicator decides.
SELECT run_id, scenario_name, any_value(domain) AS domain, signal, assertion,
       list(reviewer ORDER BY reviewer) FILTER (WHERE verdict = 'pass') AS passed_by,
       list(reviewer ORDER BY reviewer) FILTER (WHERE verdict = 'fail') AS failed_by
FROM reviews
GROUP BY run_id, scenario_name, signal, assertion
HAVING count(DISTINCT verdict) > 1
