"""Scoring as the upstream runner scores: the signals as Polars expressions (composed with
``.pipe``), ACTION_MATCH's comparator, policies, and the rate counts a set of scores adds up to."""

from scorelake.transforms.registry import SCORER_VERSION
from scorelake.transforms.scoring._action_match import (
    ActionMatch,
    ActionMatchUndefined,
    Difference,
    ItemComparison,
    TextFlags,
    compare,
    differences,
    item_comparisons,
    match_scalar,
)
from scorelake.transforms.scoring._policy import RECORDED, Policy
from scorelake.transforms.scoring._reviews import (
    REVIEW_COLUMNS,
    MAX_REVIEWER_CHARS,
    REVIEW_RULES,
    review_columns,
    reviewer_identity,
    split_reviewed,
    standing_verdicts,
)
from scorelake.transforms.scoring._rollup import SCENARIO_FACTS, rate_counts
from scorelake.transforms.scoring._score import score_and_count
from scorelake.transforms.scoring._signal import NEMO_SIGNALS, Signal
from scorelake.transforms.scoring._signals import as_scores, with_scores

__all__ = [
    "NEMO_SIGNALS",
    "RECORDED",
    "SCENARIO_FACTS",
    "SCORER_VERSION",
    "ActionMatch",
    "ActionMatchUndefined",
    "Difference",
    "ItemComparison",
    "differences",
    "item_comparisons",
    "MAX_REVIEWER_CHARS",
    "Policy",
    "REVIEW_COLUMNS",
    "REVIEW_RULES",
    "Signal",
    "TextFlags",
    "as_scores",
    "compare",
    "match_scalar",
    "rate_counts",
    "review_columns",
    "reviewer_identity",
    "score_and_count",
    "split_reviewed",
    "standing_verdicts",
    "with_scores",
]
