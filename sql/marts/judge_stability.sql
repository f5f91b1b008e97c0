-- depends on: stg_judge_inputs, stg_judgements, stg_scenarios
-- Per repeated judge (`rejudge --repeat K`: its asks are the judges NAME#1 .. NAME#K), run and
-- scenario: how often the same judge, asked again, says otherwise. An ask passes where its score
-- reaches the scenario's own threshold (a NaN score fails, as upstream compares it; a judge error
-- scores 0.0). `flip_rate`: the share of asks that disagree with the majority; `settled_after`: the
-- asks it took before the running majority stopped changing (1: the first ask already said it).
WITH asks AS (
    SELECT regexp_extract(g.judge, '^(.*)#([0-9]+)$', 1) AS judge,
           CAST(regexp_extract(g.judge, '^(.*)#([0-9]+)$', 2) AS BIGINT) AS ask,
           g.run_id, g.scenario_name, s.domain, g.score,
           coalesce(NOT isnan(g.score) AND g.score >= s.rec_judge_threshold, false) AS passed
    FROM stg_judgements AS g
    JOIN stg_judge_inputs AS i USING (run_id, scenario_name, input_hash)
    JOIN stg_scenarios AS s USING (run_id, scenario_name)
    WHERE regexp_matches(g.judge, '^.*#[0-9]+$')
),
whole AS (
    SELECT judge, run_id, scenario_name, any_value(domain) AS domain, count(*) AS asks,
           count(*) FILTER (WHERE passed) AS passes, median(score) AS score_median,
           max(score) - min(score) AS score_spread
    FROM asks
    GROUP BY judge, run_id, scenario_name
),
running AS (
    SELECT judge, run_id, scenario_name, ask_number,
           passes_so_far > ask_number / 2 AS majority_so_far
    FROM (SELECT judge, run_id, scenario_name,
                 row_number() OVER w AS ask_number,
                 count(*) FILTER (WHERE passed) OVER w AS passes_so_far
          FROM asks
          WINDOW w AS (PARTITION BY judge, run_id, scenario_name ORDER BY ask
                       ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
)
SELECT w.judge, w.run_id, w.scenario_name, w.domain, w.asks, w.passes,
       least(w.passes, w.asks - w.passes) / w.asks AS flip_rate,
       w.passes > w.asks / 2 AS majority_passed,
       w.score_median, w.score_spread,
       coalesce(max(r.ask_number) FILTER (WHERE r.majority_so_far <> (w.passes > w.asks / 2)) + 1, 1) AS settled_after
FROM whole AS w
JOIN running AS r USING (judge, run_id, scenario_name)
GROUP BY ALL
