"""Scoring policies: everything that can change a verdict, with a stable content-hash id.

A field left unset inherits what each run recorded in ``run_args.json`` (per scenario: the
flags of the invocation that produced it), so the default policy ``recorded`` reproduces the
upstream runner's own numbers.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.names import RECORDED
from scorelake.transforms.registry import SCORER_VERSION
from scorelake.transforms.scoring._signal import Signal
from scorelake.transforms.scoring._reviews import reviewer_identity


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = RECORDED
    judge_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    min_agent_turns: int | None = Field(default=None, ge=0, le=2**63 - 1)  # a 64-bit column
    strict_match: bool | None = None
    judge_enabled: bool | None = None
    # JUDGE_PASSED and NL_ASSERTION from this judge's judgements (`scorelake rejudge`); None: the
    # runs' own judge_result.json (the built-in judge `recorded`)
    judge: str | None = None
    # people's verdicts (`scorelake review`) take the place of the signals they review
    reviews: bool = False
    # which reviewer's verdict stands where several reviewed a key (REVIEW_RULES; None: the latest)
    review_rule: Literal["majority", "adjudicated"] | None = None
    adjudicator: str | None = None  # adjudicated: the reviewer who decides where reviewers disagree
    # only the judge's verdicts its calibration keeps (`judges --calibrate`, the one standing when
    # scored): an escalated JUDGE_PASSED is not applicable unless people's verdict takes its place
    selective: bool = False
    # domain bucket -> whitelist that replaces the scenarios' own success_signals
    whitelists: dict[str, tuple[Signal, ...]] = Field(default_factory=dict)
    scorer_version: str = SCORER_VERSION

    @field_validator("whitelists")
    @classmethod
    def _non_empty(cls, value: dict[str, tuple[Signal, ...]]) -> dict[str, tuple[Signal, ...]]:
        for domain, signals in value.items():
            if not signals:
                raise ValueError(f"whitelist for '{domain}' is empty; upstream refuses unscored domains")
        return value

    @field_validator("judge")
    @classmethod
    def _builtin_judge(cls, value: str | None) -> str | None:
        return None if value == RECORDED else value  # the runs' own judge: the default, one policy id

    @field_validator("review_rule", mode="before")
    @classmethod
    def _latest_is_the_default(cls, value: object) -> object:
        return None if value == "latest" else value  # one policy id for the default rule

    @field_validator("adjudicator")
    @classmethod
    def _one_voter(cls, value: str | None) -> str | None:
        return None if value is None else reviewer_identity(value)  # as reviews store names

    @model_validator(mode="after")
    def _rule_needs_reviews(self) -> Policy:
        if self.review_rule is not None and not self.reviews:
            raise ValueError("a review rule is for a policy that takes reviews (--reviews)")
        if (self.review_rule == "adjudicated") != (self.adjudicator is not None):
            raise ValueError("the adjudicated rule takes an adjudicator (--adjudicator NAME), and only it does")
        return self

    @classmethod
    def checked(cls, name: str | None, **fields: object) -> Policy:
        """A policy of ``fields``, named ``name`` (default: after its id); ``InvalidArgument``
        naming the field and what it takes when a value cannot be used."""
        try:
            policy = cls(**fields)
        except ValidationError as exc:
            raise InvalidArgument.of_validation(exc) from None
        return policy.model_copy(update={"name": name or f"policy-{policy.id[:8]}"})

    def content(self) -> dict:
        """What the verdicts depend on: everything but the name."""
        data = self.model_dump(mode="json", exclude={"name"} | self._unset())
        data["whitelists"] = {k: list(v) for k, v in sorted(data["whitelists"].items())}
        return data

    @property
    def id(self) -> str:
        blob = json.dumps(self.content(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def spec_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude=self._unset() or None), sort_keys=True)

    def _unset(self) -> set[str]:
        """Fields newer than the first policies, left out while unset: a policy keeps its id."""
        return ({"judge"} if self.judge is None else set()) | ({"reviews"} if not self.reviews else set()) | (
            {"review_rule", "adjudicator"} if self.review_rule is None else set()) | (
            {"selective"} if not self.selective else set())

    @classmethod
    def from_spec_json(cls, text: str) -> Policy:
        return cls.model_validate_json(text)

    def effective(self) -> list[pl.Expr]:
        """Columns ``eff_*`` holding the flag each scenario is scored under."""

        def pick(value: object, recorded: str, dtype: pl.DataType) -> pl.Expr:
            return pl.col(recorded) if value is None else pl.lit(value, dtype=dtype)

        signals: pl.Expr = pl.col("success_signals")
        for domain, whitelist in sorted(self.whitelists.items()):
            signals = pl.when(pl.col("domain") == domain).then(
                pl.lit([str(s) for s in whitelist], dtype=pl.List(pl.String))).otherwise(signals)
        return [
            pick(self.judge_enabled, "rec_judge_enabled", pl.Boolean).alias("eff_judge_enabled"),
            pick(self.judge_threshold, "rec_judge_threshold", pl.Float64).alias("eff_judge_threshold"),
            pick(self.strict_match, "rec_strict_match", pl.Boolean).alias("eff_strict_match"),
            pick(self.min_agent_turns, "rec_min_agent_turns", pl.Int64).alias("eff_min_agent_turns"),
            signals.alias("eff_success_signals"),
        ]
