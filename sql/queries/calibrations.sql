-- `scorelake judges`: the calibration that stands per judge and scope, (all) first.
SELECT judge, scope, alpha, delta, threshold, labels, kept_labels, kept_disagreements, agreement_bound,
       judged, coverage, more_labels, note, created_at, calibration_id
FROM calibrations
WHERE $judge IS NULL OR judge = $judge
ORDER BY judge, scope <> '(all)', scope
