-- depends on: stg_runs, stg_scenarios, stg_verdicts
-- Inspect AI runs (source 'inspect'): per run, task (the domain) and scorer, the metrics Inspect
-- computes and writes in its log's results, recomputed from the stored values (each counted as
-- Inspect's value_to_float counts it): a sample's epochs reduced to their mean, then over the
-- samples that were scored the mean (`accuracy`, and `mean` for a numeric scorer: the same number)
-- and its standard error (the sample standard deviation over the square root of their count; 0 for
-- one sample), as Inspect's accuracy(), mean() and stderr() compute them.
WITH scored AS (
    SELECT v.run_id, s.domain AS task, v.label AS scorer, v.ordinal, s.task_id,
           (v.actual_json ->> '$.counts_as')::DOUBLE AS value
    FROM stg_verdicts AS v
    JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
    JOIN stg_runs AS r USING (run_id, generation)
    WHERE r.source = 'inspect' AND v.kind = 'nl_assertion' AND v.side = 'scorer'
),
per_sample AS (
    SELECT run_id, task, scorer, min(ordinal) AS ordinal, task_id, avg(value) AS value, count(*) AS epochs
    FROM scored
    GROUP BY ALL
)
SELECT run_id, task, scorer, min(ordinal) AS ordinal, count(*) AS samples, sum(epochs) AS scores,
       avg(value) AS accuracy, avg(value) AS mean,
       CASE WHEN count(*) > 1 THEN stddev_samp(value) / sqrt(count(*)) ELSE 0.0 END AS stderr
FROM per_sample
GROUP BY run_id, task, scorer
