-- Two judges' verdicts on the same NL assertions ($a, $b; $runs: a list of run ids, or NULL for all).
SELECT a.run_id, a.scenario_name, s.domain, a.assertion_index, a.assertion,
       a.passed AS passed_a, b.passed AS passed_b, ja.judge_error AS error_a, jb.judge_error AS error_b
FROM judge_nl_verdicts AS a
JOIN judge_nl_verdicts AS b USING (run_id, scenario_name, assertion_index)
JOIN judgements AS ja ON ja.judge = a.judge AND ja.run_id = a.run_id AND ja.scenario_name = a.scenario_name
JOIN judgements AS jb ON jb.judge = b.judge AND jb.run_id = b.run_id AND jb.scenario_name = b.scenario_name
JOIN stg_scenarios AS s ON s.run_id = a.run_id AND s.scenario_name = a.scenario_name
WHERE a.judge = $a AND b.judge = $b AND ($runs IS NULL OR list_contains($runs, a.run_id))
ORDER BY a.run_id, a.scenario_name, a.assertion_index
