-- The verdict that stands per key (run, scenario, signal, assertion): what a policy that takes
-- reviews scores with, and what `compare-judges human` compares a judge against.
SELECT * EXCLUDE (standing) FROM review_history WHERE standing
