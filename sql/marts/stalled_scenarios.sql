-- depends on: scenario_scores
-- Scenarios whose agent answered fewer than min_agent_turns times: counted as failures in the
-- composite and task rates, skipped in every per-signal rate.
SELECT
    run_id,
    policy_id,
    policy_name,
    judge,
    scenario_name,
    domain,
    agent_turns,
    min_agent_turns,
    total_turns,
    stop_reason,
    passed AS signals_passed,
    failed AS signals_failed
FROM scenario_scores
WHERE stalled
