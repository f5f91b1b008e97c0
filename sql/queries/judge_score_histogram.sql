-- A run's judge scores under a policy, per domain, in ten bins of 0.1 (a score outside 0-1 in the
-- nearest end bin; NaN left out), with the thresholds the domain's scenarios are scored with.
WITH scored AS (
    SELECT domain, greatest(0, least(9, floor(judge_score * 10)))::INTEGER AS bin, judge_threshold
    FROM scenario_scores
    WHERE run_id = $run_id AND policy_id = $policy_id AND judge_score IS NOT NULL AND NOT isnan(judge_score)
)
SELECT domain, bin, count(*) AS scenarios,
       any_value(thresholds) AS thresholds
FROM scored
JOIN (SELECT domain, list_sort(list_distinct(list(judge_threshold))) AS thresholds FROM scored GROUP BY domain)
    USING (domain)
GROUP BY domain, bin
ORDER BY domain, bin
