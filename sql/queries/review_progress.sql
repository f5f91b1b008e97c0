-- The viewer's review navigation and progress: per reviewer, the scenarios they have a standing
-- verdict on and how many verdicts; one row `(all)` with the scenarios any reviewer reviewed and the
-- scenarios whose reviewers disagree.
SELECT reviewer, count(DISTINCT (run_id, scenario_name)) AS scenarios, count(*) AS verdicts,
       NULL::BIGINT AS disagreeing
FROM reviews
GROUP BY reviewer
UNION ALL
SELECT '(all)', count(DISTINCT (run_id, scenario_name)), count(*),
       (SELECT count(DISTINCT (run_id, scenario_name)) FROM review_disagreements)
FROM reviews
ORDER BY reviewer = '(all)' DESC, scenarios DESC, reviewer
