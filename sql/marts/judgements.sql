-- depends on: stg_judge_inputs, stg_judge_results, stg_judgements, stg_scenarios
-- Every judge's judgement per scenario of the committed runs: the built-in judge `recorded` (the
-- runs' own judge_result.json) and each judge `scorelake rejudge` asked, of the judge input stored
-- now. `judge_error`: the judge failed (upstream's "Error: ..." reason, scored 0.0), not the agent.
-- `askable`: a judge can be asked (upstream asks none where no agent evidence was observed).
SELECT 'recorded' AS judge, j.run_id, j.scenario_name, s.domain, j.score, j.reason, j.errored AS judge_error,
       j.extra_json, s.nl_passed, s.nl_total, coalesce(i.askable, false) AS askable, 'recorded' AS source,
       NULL::BIGINT AS prompt_tokens, NULL::BIGINT AS completion_tokens, NULL::DOUBLE AS latency_ms,
       NULL::BIGINT AS attempts, NULL::TIMESTAMPTZ AS judged_at, NULL::BOOLEAN AS odd_score, NULL::VARCHAR AS reply
FROM stg_judge_results AS j
JOIN stg_scenarios AS s USING (run_id, scenario_name)
LEFT JOIN stg_judge_inputs AS i USING (run_id, scenario_name)
UNION ALL BY NAME
SELECT g.judge, g.run_id, g.scenario_name, s.domain, g.score, g.reason, g.errored AS judge_error,
       g.extra_json, g.nl_passed, g.nl_total, i.askable, g.source, g.prompt_tokens, g.completion_tokens, g.latency_ms,
       g.attempts, g.judged_at, g.odd_score, g.reply
FROM stg_judgements AS g
JOIN stg_judge_inputs AS i USING (run_id, scenario_name, input_hash)
JOIN stg_scenarios AS s USING (run_id, scenario_name)
