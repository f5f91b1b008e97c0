-- `scorelake judges --stability`: per repeated judge and domain (and `(all)`), how stable its
-- verdicts are when asked again (the judge_stability view, pooled over scenarios), or
-- (`$by = 'scenario'`) each scenario, the most unstable first.
SELECT judge, NULL AS run_id, NULL AS scenario_name, coalesce(domain, '(all)') AS domain,
       count(*) AS scenarios, max(asks) AS asks, avg(flip_rate) AS flip_rate,
       count(*) FILTER (WHERE flip_rate > 0) AS flipping_scenarios,
       avg(score_spread) AS score_spread, avg(settled_after) AS settled_after, max(settled_after) AS settled_after_max
FROM judge_stability
WHERE $by = 'domain' AND ($judge IS NULL OR judge = $judge)
GROUP BY GROUPING SETS ((judge, domain), (judge))
UNION ALL BY NAME
SELECT judge, run_id, scenario_name, domain, 1 AS scenarios, asks, flip_rate,
       CAST(flip_rate > 0 AS BIGINT) AS flipping_scenarios, score_spread, settled_after,
       settled_after AS settled_after_max
FROM judge_stability
WHERE $by = 'scenario' AND ($judge IS NULL OR judge = $judge)
ORDER BY judge, domain = '(all)' DESC, flip_rate DESC, domain, run_id, scenario_name
