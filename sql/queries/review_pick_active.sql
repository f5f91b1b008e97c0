-- the scenarios an active draw drew for labels ($drawn_runs, $drawn_scenarios, with their $chances as
-- `label_draws` records them), the likeliest drawn first (`weight`: its chance, which `rates --ppi`
-- weighs the label by).
WITH drawn AS (
    SELECT unnest($drawn_runs) AS run_id, unnest($drawn_scenarios) AS scenario_name, unnest($chances) AS chance
)
SELECT s.run_id, s.scenario_name,
       format('drawn for a label with chance {:.2f} (active labels: the chance weighs the label)', d.chance)
           AS reason,
       true AS gated, d.chance AS weight
FROM scope AS s
JOIN drawn AS d USING (run_id, scenario_name)
