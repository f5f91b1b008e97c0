-- depends on: stg_calibrations
-- The calibration that stands per judge and scope: the latest (`scorelake judges` shows them;
-- `rates --selective`, the `escalated` review pick and a selective policy keep verdicts by them).
SELECT *
FROM stg_calibrations
QUALIFY row_number() OVER (PARTITION BY judge, scope ORDER BY created_at DESC, calibration_id DESC) = 1
