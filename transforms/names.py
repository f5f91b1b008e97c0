"""Names every layer uses, in a module that imports nothing (reads stay light)."""

RECORDED = "recorded"  # the built-in policy, and the built-in judge (the runs' own judge_result.json)

# The success_breakdown names, in its order: the runner's SuccessSignal, then tau2's COMMUNICATE.
SIGNALS = ("is_action_match", "db_state_match", "db_state_assertion", "nl_assertion", "judge_passed", "clean_exit",
           "communicate")

# What a run's scenarios can be sorted by (sql/queries/run_scenarios.sql).
SCENARIO_SORTS = ("position", "name", "domain", "judge_score", "agent_turns", "outcome")

# Upstream's reason for an NL assertion its judge's reply gave no verdict for (counted as failed).
MISSING_VERDICT = "Missing verdict; treated as failed."
