-- depends on: judgements, scenario_scores
-- Scenarios whose LLM judge failed (upstream's "Error: ..." reason: the endpoint down or a reply it
-- could not parse) per policy, the policy's judge's judgement, and whether the judge is all that failed them:
-- `judge_only` when every failed signal is the judge's (judge_passed, nl_assertion) and the
-- scenario did not stall. Upstream scored such a judgement 0.0, so it reads as an agent failure.
SELECT s.run_id, s.policy_id, s.policy_name, s.judge, s.scenario_name, s.domain, j.reason, s.is_successful, s.failed,
       s.is_successful = false AND NOT s.stalled
           AND list_has_all(['judge_passed', 'nl_assertion'], s.failed) AS judge_only
FROM scenario_scores AS s
JOIN judgements AS j ON j.run_id = s.run_id AND j.scenario_name = s.scenario_name AND j.judge = s.judge
WHERE j.judge_error
