-- `scorelake report`: stalled scenarios under one policy.
SELECT run_id, scenario_name, agent_turns, min_agent_turns
FROM stalled_scenarios WHERE policy_id = $policy_id ORDER BY run_id, scenario_name
