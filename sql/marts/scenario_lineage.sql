-- depends on: scenario_scores, stg_judge_inputs, stg_judges, stg_runs
-- What each scenario was graded against, per run and policy (lineage): its definition (the hash,
-- and each part's own hash as JSON), the judge whose verdicts it took (the policy's judge, or the
-- runs' own: `recorded`) with that judge's model (a rejudge judge's own, else the run's
-- --judge-model) and the hash of the system prompt it was asked with (a rejudge judge's --prompt,
-- else the stored judge input's), the flags it was scored under, and the scorer's version.
SELECT s.run_id, s.policy_id, s.policy_name, s.scenario_name, s.domain, s.definition_hash, s.definition_json,
       s.judge,
       coalesce(json_extract_string(j.spec_json, '$.model'),
                json_extract_string(r.run_args_json, '$.invocations[-1].parsed_args.judge_model')) AS judge_model,
       md5(coalesce(json_extract_string(j.spec_json, '$.prompt'), i.system_prompt)) AS judge_prompt_md5,
       s.judge_enabled, s.judge_threshold, s.strict_match, s.min_agent_turns, s.success_signals, s.scorer_version
FROM scenario_scores AS s
JOIN stg_runs AS r USING (run_id)
LEFT JOIN stg_judge_inputs AS i USING (run_id, scenario_name)
LEFT JOIN stg_judges AS j ON j.name = s.judge
