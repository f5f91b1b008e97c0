-- `scorelake judges`: each judge with its coverage of the askable stored judge inputs, its error
-- rate, and the calls, tokens and latency it cost (answers taken from the cache or a base judge cost nothing);
-- a repeated judge's majority (NAME@majority) with the asks behind it, how often they flip, and
-- the model its asks asked (it asks nothing itself).
WITH inputs AS (
    SELECT count(*) AS askable FROM stg_judge_inputs WHERE askable
),
stats AS (
    SELECT judge,
           count(*) FILTER (WHERE askable) AS judged,
           count(*) FILTER (WHERE askable AND judge_error) AS errors,
           -- scores upstream's float() took that were no number from 0 to 1 (true, "0.9", Infinity, 7)
           count(*) FILTER (WHERE odd_score) AS odd_scores,
           count(*) FILTER (WHERE source = 'asked') AS asked,
           count(*) FILTER (WHERE source = 'cache') AS from_cache,
           count(*) FILTER (WHERE source = 'copied') AS from_base,
           sum(attempts - 1) FILTER (WHERE source = 'asked')::BIGINT AS retries,
           sum(prompt_tokens) FILTER (WHERE source = 'asked')::BIGINT AS prompt_tokens,
           sum(completion_tokens) FILTER (WHERE source = 'asked')::BIGINT AS completion_tokens,
           avg(latency_ms) FILTER (WHERE source = 'asked') AS mean_latency_ms,
           max(judged_at) AS last_judged_at
    FROM judgements
    GROUP BY judge
),
stability AS (
    SELECT judge || '@majority' AS judge, max(asks) AS asks, avg(flip_rate) AS flip_rate,
           count(*) FILTER (WHERE flip_rate > 0) / count(*) AS flipping_share
    FROM judge_stability
    GROUP BY judge
),
ask_models AS (
    SELECT regexp_extract(name, '^(.*)#[0-9]+$', 1) AS repeated,
           string_agg(DISTINCT json_extract_string(spec_json, '$.model'), ', ') AS model
    FROM stg_judges
    WHERE regexp_matches(name, '#[0-9]+$')
    GROUP BY repeated
),
judges AS (
    SELECT 'recorded' AS judge, NULL AS spec_json, NULL::TIMESTAMPTZ AS created_at
    UNION ALL
    SELECT name, spec_json, created_at FROM stg_judges
)
SELECT j.judge,
       coalesce(json_extract_string(j.spec_json, '$.model'), a.model) AS model,
       json_extract_string(j.spec_json, '$.url') AS url,
       json_extract_string(j.spec_json, '$.base') AS base,
       coalesce(s.judged, 0) AS judged,
       i.askable AS inputs,
       coalesce(s.judged, 0) / nullif(i.askable, 0) AS coverage,
       coalesce(s.errors, 0) AS errors,
       s.errors / nullif(s.judged, 0) AS error_rate,
       coalesce(s.odd_scores, 0) AS odd_scores,
       coalesce(s.asked, 0) AS asked, coalesce(s.from_cache, 0) AS from_cache, coalesce(s.from_base, 0) AS from_base,
       coalesce(s.retries, 0) AS retries,
       s.prompt_tokens, s.completion_tokens, s.mean_latency_ms, j.created_at, s.last_judged_at,
       st.asks, st.flip_rate, st.flipping_share, j.spec_json
FROM judges AS j
LEFT JOIN stats AS s USING (judge)
LEFT JOIN stability AS st USING (judge)
LEFT JOIN ask_models AS a ON a.repeated = json_extract_string(j.spec_json, '$.majority_of')
CROSS JOIN inputs AS i
ORDER BY j.judge <> 'recorded', j.created_at
