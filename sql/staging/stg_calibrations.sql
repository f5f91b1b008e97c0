-- A judge's verdicts kept with a guarantee (`scorelake judges --calibrate`): per calibration, judge and
-- scope (a domain, or (all)), the confidence threshold chosen on people's labels and what it kept.
SELECT * FROM {{ calibrations }}
