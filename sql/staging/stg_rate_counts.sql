-- The rate_counts table (sums of the scores per run, policy and domain), restricted like
-- stg_scores to each run's committed generation and to stored policies: compacted rows, then
-- per-run and re-score rows not already in the snapshot.
WITH compacted AS (
    SELECT * FROM read_parquet('{{ tables }}/_snapshots/rate_counts.parquet')
)
SELECT c.*
FROM compacted AS c
SEMI JOIN stg_runs AS r ON c.run_id = r.run_id AND c.generation = r.generation
SEMI JOIN stg_policies AS p ON c.policy_id = p.policy_id
UNION ALL
SELECT d.*
FROM read_parquet('{{ tables }}/rate_counts/*/*.parquet') AS d
SEMI JOIN stg_runs AS r ON d.run_id = r.run_id AND d.generation = r.generation
SEMI JOIN stg_policies AS p ON d.policy_id = p.policy_id
ANTI JOIN (SELECT DISTINCT run_id, generation, policy_id FROM compacted) AS k
    ON d.run_id = k.run_id AND d.generation = k.generation AND d.policy_id = k.policy_id
