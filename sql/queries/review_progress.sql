-- The viewer's review navigation and progress: per reviewer, the scenarios they have a standing
-- verdict on and how many verdicts; one row `(all)` with the scenarios any reviewer reviewed and the
-- scenarios whose reviewers disagree.
WITH per AS (  -- one row per reviewer and scenario reviewed
    SELECT reviewer, run_id, scenario_name, count(*) AS verdicts
    FROM reviews
    GROUP BY ALL
),
keys AS (  -- one row per key reviewed, whether its reviewers disagree
    SELECT run_id, scenario_name, count(DISTINCT verdict) > 1 AS disagree
    FROM reviews
    GROUP BY run_id, scenario_name, signal, assertion
)
SELECT reviewer, count(*) AS scenarios, sum(verdicts)::BIGINT AS verdicts, NULL::BIGINT AS disagreeing
FROM per
GROUP BY reviewer
UNION ALL
SELECT '(all)',
       (SELECT count(*) FROM (SELECT DISTINCT run_id, scenario_name FROM per)),
       (SELECT sum(verdicts)::BIGINT FROM per),
       (SELECT count(*) FROM (SELECT DISTINCT run_id, scenario_name FROM keys WHERE disagree))
ORDER BY reviewer = '(all)' DESC, scenarios DESC, reviewer
