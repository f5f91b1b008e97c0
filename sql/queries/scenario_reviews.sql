-- The standing reviews of one scenario (`show`, the viewer's scenario page).
SELECT signal, assertion, verdict, reviewer, note, reviewed_at FROM reviews
WHERE run_id = $run_id AND scenario_name = $scenario
ORDER BY signal, assertion NULLS FIRST
