-- The viewer's speech timeline of one scenario: its voice row with the segments and what was heard.
SELECT v.*, s.domain
FROM stg_voice AS v
JOIN stg_scenarios AS s USING (run_id, generation, scenario_name)
WHERE v.run_id = $run_id AND v.scenario_name = $scenario
