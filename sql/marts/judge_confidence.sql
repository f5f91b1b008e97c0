-- depends on: judge_stability, judgements, stg_scenarios
-- Each judge's verdict per scenario (JUDGE_PASSED at the scenario's own threshold) and how sure the
-- judge is of it, 0 to 1 (analysis/_selective.py): of a repeated judge's majority (NAME@majority),
-- the share of its asks that agree with the majority; of a judge asked once, 0.5 plus half the
-- score's distance from the threshold; a judge error or a score that is no number, 0. `doubt`: the
-- chance the judge is wrong, read as 1 - confidence (what an active draw weighs).
SELECT j.judge, j.run_id, j.scenario_name, j.domain,
       NOT j.judge_error AND NOT isnan(j.score) AND j.score >= s.rec_judge_threshold AS passed,
       CASE WHEN j.judge_error OR j.score IS NULL OR isnan(j.score) THEN 0.0
            WHEN st.asks IS NOT NULL THEN 1 - st.flip_rate
            ELSE least(1.0, 0.5 + abs(j.score - s.rec_judge_threshold) / 2) END AS confidence,
       st.asks
FROM judgements AS j
JOIN stg_scenarios AS s USING (run_id, scenario_name)
LEFT JOIN judge_stability AS st
       ON st.judge || '@majority' = j.judge AND st.run_id = j.run_id AND st.scenario_name = j.scenario_name
WHERE j.askable AND s.rec_judge_threshold IS NOT NULL
