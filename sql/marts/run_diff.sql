-- depends on: scenario_scores
-- Two runs side by side, scenario by scenario, under the same policy: each signal's verdict and
-- the composite before (_a) and after (_b), and whether it flipped. Filter on run_a and run_b.
-- Rate signals appear as their pass verdict (rate = 1). `flip` is 'fixed' (False -> True) or
-- 'broken' (True -> False) for the composite; NULL when it did not flip between two verdicts.
SELECT
    a.run_id AS run_a,
    b.run_id AS run_b,
    a.policy_id,
    a.scenario_name,
    a.domain,
    a.is_successful AS is_successful_a,
    b.is_successful AS is_successful_b,
    a.is_successful IS DISTINCT FROM b.is_successful AS flipped,
    CASE WHEN NOT a.is_successful AND b.is_successful THEN 'fixed'
         WHEN a.is_successful AND NOT b.is_successful THEN 'broken' END AS flip,
    a.is_task_successful AS is_task_successful_a,
    b.is_task_successful AS is_task_successful_b,
    a.is_task_successful IS DISTINCT FROM b.is_task_successful AS task_flipped,
    {{ signal_flips }},  -- each declared signal (transforms/registry.py SIGNALS)
    a.stalled AS stalled_a,
    b.stalled AS stalled_b
FROM scenario_scores AS a
JOIN scenario_scores AS b
    ON a.scenario_name = b.scenario_name AND a.policy_id = b.policy_id
