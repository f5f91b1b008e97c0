-- What to review next: the scenarios a pick chooses (its query, queries/review_pick_*.sql, set in for
-- `picks`: whose judge failed, two judges disagree on, a seeded sample per domain, the most dead air,
-- turns never heard or word errors, by the `weight` such a pick gives each), of $run or of every
-- run, under the policy $policy_id; scenarios nobody has reviewed first, then those where what was
-- picked gates success (`gated`: a judge error where the judge's signals are outside the whitelist
-- changes nothing), at most $limit. Each pick is
-- its own query text: a prepared statement cannot fold `$pick = ...` away, and every branch would run.
WITH scope AS (
    SELECT s.run_id, s.scenario_name, s.domain, s.position, p.judge, coalesce(s.rec_judge_threshold, 0.9) AS threshold,
           sc.success_signals AS gates
    FROM stg_scores AS sc
    JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
    JOIN stg_policies AS p USING (policy_id)
    WHERE sc.policy_id = $policy_id AND ($run IS NULL OR s.run_id = $run)
),
picked AS (
{{ picks }}
),
ranked AS (  -- at most $limit of them, nobody's reviewed ones first, then those where what is picked gates success
    SELECT p.*, s.domain, s.position,
           EXISTS (SELECT 1 FROM stg_reviews AS r WHERE r.run_id = p.run_id AND r.scenario_name = p.scenario_name)
               AS any_review
    FROM picked AS p
    JOIN scope AS s USING (run_id, scenario_name)
    ORDER BY any_review, NOT p.gated, {{ draw_p }}, p.run_id, s.position
    LIMIT $limit
)
SELECT q.run_id, q.scenario_name, q.domain, q.reason, coalesce(n.reviews, 0) AS reviews, q.gated
FROM ranked AS q
LEFT JOIN (SELECT run_id, scenario_name, count(*) AS reviews FROM reviews
           SEMI JOIN ranked USING (run_id, scenario_name) GROUP BY ALL) AS n USING (run_id, scenario_name)
ORDER BY coalesce(n.reviews, 0) > 0, NOT q.gated, {{ draw_q }}, q.run_id, q.position
