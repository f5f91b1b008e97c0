-- Scenarios drawn for labelling with a known chance (the review queue's `active` pick), each once per draw.
SELECT * FROM {{ label_draws }}
QUALIFY row_number() OVER (PARTITION BY draw_id, run_id, scenario_name ORDER BY drawn_at) = 1
