-- depends on: review_history
-- Each reviewer's verdict that stands per key (run, scenario, signal, assertion). Which of them a
-- policy that takes reviews scores with is its review rule's (latest, majority, adjudicated);
-- `compare-judges human` compares against the latest, `human:NAME` against one reviewer's.
SELECT * EXCLUDE (standing) FROM review_history WHERE standing
