-- the scenarios an active draw ($draw_id) drew for labels, the likeliest drawn first (`weight`: its
-- chance, recorded: `rates --ppi` weighs the label by it).
SELECT s.run_id, s.scenario_name,
       format('drawn for a label with chance {:.2f} (active labels: the chance weighs the label)', d.probability)
           AS reason,
       true AS gated, d.probability AS weight
FROM scope AS s
JOIN stg_label_draws AS d USING (run_id, scenario_name)
WHERE d.draw_id = $draw_id
