-- Per failed scenario and policy: the one cause it failed by, first that holds (README, "Voice"):
--   judge          the judge itself failed (its result an error) and JUDGE_PASSED failed the scenario
--   stall          the stall override (fewer agent turns than min-agent-turns)
--   transcription  a key entity the user said that the agent's speech recognition heard otherwise,
--                  in a turn the agent acted after (answered, or called a tool)
--   turn_taking    2 or more missed user turns, a silence over 10 s, or 3 or more agent barge-ins
--   logic          everything heard right, the agent still did the wrong thing
-- with the evidence that named it.
WITH facts AS (
    SELECT sc.run_id, sc.scenario_name, sc.domain, sc.policy_id, sc.policy_name, sc.failed, sc.stalled,
           sc.agent_turns, sc.min_agent_turns, coalesce(j.errored, false) AS judge_errored,
           v.misheard_acted_on, v.misheard_json, v.missed_user_turns, v.longest_silence_s, v.agent_barge_ins
    FROM scenario_scores AS sc
    LEFT JOIN judge_results AS j USING (run_id, scenario_name)
    LEFT JOIN scenario_voice AS v USING (run_id, scenario_name)
    WHERE sc.is_successful = false
)
SELECT run_id, scenario_name, domain, policy_id, policy_name,
       CASE WHEN judge_errored AND list_contains(failed, 'judge_passed') THEN 'judge'
            WHEN stalled THEN 'stall'
            WHEN misheard_acted_on > 0 THEN 'transcription'
            WHEN missed_user_turns >= 2 OR longest_silence_s > 10 OR agent_barge_ins >= 3 THEN 'turn_taking'
            ELSE 'logic' END AS failure_cause,
       CASE WHEN judge_errored AND list_contains(failed, 'judge_passed') THEN 'the judge returned an error'
            WHEN stalled THEN format('{} agent turns, fewer than {}', agent_turns, min_agent_turns)
            WHEN misheard_acted_on > 0 THEN 'misheard: ' || misheard_json
            WHEN missed_user_turns >= 2 OR longest_silence_s > 10 OR agent_barge_ins >= 3 THEN
                format('{} missed user turns, longest silence {:.1f} s, {} agent barge-ins',
                       missed_user_turns, longest_silence_s, agent_barge_ins)
            ELSE 'failed by: ' || array_to_string(failed, ', ') END AS evidence
FROM facts
