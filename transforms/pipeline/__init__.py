"""The steps the flows orchestrate (ingest, re-score, check, conversion), free of Prefect.

Each name is imported from its module when first used: an ingest's worker process imports only
``_session`` (reading sessions), not the warehouse, the judge's client or analysis.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> (module, its name there)
_EXPORTS = {
    **{name: ("_check", name) for name in ("verify",)},
    **{name: ("_gate", name) for name in ("alert", "comparison", "gate", "listed", "previous_runs",
                                          "regression_text")},
    **{name: ("_alerts", name) for name in ("Delivery", "deliver")},
    "gate_summary": ("_gate", "summary"),
    **{name: ("_ingest", name) for name in ("IngestPlan", "commit_ingested", "group_runs", "plan_ingest",
                                            "record_refusals")},
    **{name: ("_session", name) for name in ("IngestedRuns", "ingest_sessions")},
    **{name: ("_judgements", name) for name in ("COMMIT_LOCK_WAIT_S", "commit_judgements", "commit_majority",
                                                "commit_orphaned_journals", "judged_by",
                                                "keep_majority_of_policies", "recorded_judgements")},
    **{name: ("_judges", name) for name in ("define_judge", "find_judge", "forget_judge", "policies_using",
                                            "save_judge", "stored_judges")},
    **{name: ("_migrate", name) for name in ("migrate", "prepare_for_writing")},
    **{name: ("_policies", name) for name in ("check_policy", "check_whitelisted_domains", "find_policy",
                                              "save_policy", "stored_policies")},
    **{name: ("_rejudge", name) for name in ("JUDGE_BATCH", "BatchResult", "JudgementCommitter", "api_key_from",
                                             "judge_batch")},
    **{name: ("_rejudge_plan", name) for name in ("RejudgePlan", "plan_rejudge", "twin_judgements")},
    **{name: ("_rescore", name) for name in ("require_judged", "rescore", "score_runs")},
    **{name: ("_reviews", name) for name in ("REVIEW_LOCK_WAIT_S", "Review", "check_reviews", "read_review_file",
                                              "ruled_reviews", "store_reviews", "undecided")},
    "describe_reviews": ("_reviews", "describe"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _EXPORTS[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value  # found once
    return value
