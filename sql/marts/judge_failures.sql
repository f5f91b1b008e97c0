-- depends on: judgements, stg_judge_results
-- Every judgement that failed (upstream's "Error: ..." reason, scored 0.0): per run, scenario and
-- judge. The runs' own judge's (`recorded`) straight from its results: the judgements view around
-- them is wider than a run's page needs.
SELECT run_id, scenario_name, 'recorded' AS judge FROM stg_judge_results WHERE errored
UNION ALL
SELECT run_id, scenario_name, judge FROM judgements WHERE judge_error AND judge <> 'recorded'
