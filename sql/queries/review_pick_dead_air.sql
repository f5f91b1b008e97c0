-- the scenarios with dead air (neither side speaking, from the call's start to its end), the most first (`weight`).
SELECT s.run_id, s.scenario_name,
       format('{:.1f} s of dead air ({:.0f}% of the call; {:.1f} s after the last speech, the call ended by {})', v.dead_air_s, 100 * v.dead_air_fraction, v.trailing_silence_s, coalesce(v.call_end, 'an unknown end')) AS reason,
       true AS gated, v.dead_air_s AS weight
FROM scope AS s
JOIN scenario_voice AS v USING (run_id, scenario_name)
WHERE v.dead_air_s > 0
