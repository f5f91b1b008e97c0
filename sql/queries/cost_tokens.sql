-- `scorelake cost`: the tokens of each run and domain (and the whole run) per side, of $runs (a list, or NULL for all).
SELECT run_id, domain, scenarios, agent_prompt_tokens, agent_completion_tokens, user_prompt_tokens,
       user_completion_tokens, judge_prompt_tokens, judge_completion_tokens
FROM run_latency
WHERE $runs IS NULL OR list_contains($runs, run_id)
ORDER BY run_id, domain = '(all)', domain
