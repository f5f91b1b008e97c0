"""Names every layer uses, in modules that import nothing (reads stay light)."""

from scorelake.transforms.registry import SIGNAL_NAMES

RECORDED = "recorded"  # the built-in policy, and the built-in judge (the runs' own judge_result.json)

# The success_breakdown names, in its order (declared in registry.py).
SIGNALS = SIGNAL_NAMES

# What a run's scenarios can be sorted by (sql/queries/run_scenarios.sql).
SCENARIO_SORTS = ("position", "name", "domain", "judge_score", "agent_turns", "outcome")

# What a review queue picks (queries/review_pick_<name>.sql) and how the viewer names it; the voice
# picks come in order of how much of it they hold, the most first.
REVIEW_PICKS = {"errors": "judge errors", "disagree": "two judges disagree", "reviewers": "reviewers disagree",
                "changed": "changed between two runs", "sample": "a random sample per domain",
                "dead_air": "the most dead air", "missing_turns": "the most turns never heard",
                "wer": "the highest word error rate", "escalated": "escalated by the judge's calibration",
                "active": "drawn where a label buys the most"}
# each pick's rows carry a weight, the largest first
RANKED_PICKS = ("dead_air", "missing_turns", "wer", "escalated", "active")

# Upstream's reason for an NL assertion its judge's reply gave no verdict for (counted as failed).
MISSING_VERDICT = "Missing verdict; treated as failed."

# A judge asked K times (rejudge --repeat): its asks are the judges NAME#k, their majority NAME@majority.
ASK = "#"
MAJORITY = "@majority"

# Whose tokens cost what (run_latency's token columns: <side>_prompt_tokens, <side>_completion_tokens)
COST_SIDES = ("agent", "user", "judge")
