-- Each judge's latest judgement per scenario and judge input (rejudge --only-errors may ask again).
SELECT *
FROM {{ judgements }}
QUALIFY row_number() OVER (PARTITION BY judge, run_id, scenario_name, input_hash
                           ORDER BY judged_at DESC, judgement_id DESC) = 1
