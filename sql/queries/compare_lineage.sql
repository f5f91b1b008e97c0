-- `scorelake compare` and `gate`: what scored each of the two runs besides its scenarios: the judge
-- (model, and the hashes of the system prompts of its stored judge inputs) and the runner's scoring flags.
SELECT r.run_id,
       json_extract_string(r.run_args_json, '$.invocations[-1].parsed_args.judge_model') AS judge_model,
       (SELECT list(DISTINCT md5(i.system_prompt) ORDER BY md5(i.system_prompt)) FROM stg_judge_inputs AS i
        WHERE i.run_id = r.run_id) AS judge_prompts,
       r.judge_enabled, r.judge_threshold, r.strict_match, r.min_agent_turns
FROM stg_runs AS r
WHERE r.run_id IN ($run_a, $run_b)
