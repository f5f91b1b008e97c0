"""What the API's commands answer, as types: the command line, the viewer and the flows share them."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl


@dataclass
class SessionReport:
    """One session an ingest read: its status, scenarios, what it quarantined and why."""

    run_id: str
    status: str
    scenarios: int
    quarantined: int
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Regrouped:
    """An unchanged run given another run group without being read again."""

    run_id: str
    group: str


@dataclass(frozen=True)
class Refusal:
    """A run ingest did not take, and why (recorded in ``refusals``)."""

    path: str
    reason: str


@dataclass
class IngestResult:
    warehouse: str
    ingested: list[SessionReport]
    unchanged: list[str]
    regrouped: list[Regrouped]
    refused: list[Refusal]
    converted: str | None = None  # where a former-format warehouse's files were kept, when this write converted it
    ran: str = ""  # how the flow ran (in-process, or as a Prefect flow run where)


@dataclass
class RescoreResult:
    warehouse: str
    scored: dict[str, int]  # policy name -> scenarios scored
    policy: str | None = None  # the policy a ``Warehouse.rescore`` defined or reused
    policy_id: str | None = None
    judge: str | None = None
    converted: str | None = None
    ran: str = ""

    @property
    def scenarios(self) -> int:
        """The scenarios scored under ``policy`` (all policies' when none is named)."""
        return self.scored[self.policy] if self.policy else sum(self.scored.values())


@dataclass
class RejudgeResult:
    warehouse: str
    judge: str
    settings: str  # the judge's settings, as people read them
    scope: int  # stored inputs in scope
    judged_already: int
    without_call: dict[str, int]  # taken over without a call: source (copied, cache) -> count
    asked: int
    errors: int
    retries: int
    tokens: int
    recovered: int  # judgements of an interrupted rejudge recovered from its journal
    error_samples: list[str]
    unanswered: int = 0  # calls left without a usable reply: stored as judge errors, to ask again
    odd_scores: int = 0  # scores upstream's float() took that are outside 0-1 or not finite
    converted: str | None = None
    ran: str = ""


@dataclass
class ReviewResult:
    """What a review (or an import of reviews) stored."""

    stored: int  # reviews
    made_on: int  # the warehouse version the reviewers saw
    version: int  # the warehouse version the reviews made


@dataclass
class GateResult:
    """Whether a candidate run may replace its base (``Warehouse.gate``)."""

    passed: bool
    regressions: list[dict]  # the deltas rows (domains, and (all)) that regressed beyond the noise and the limit
    broken: dict[str, list[str]]  # per regressed domain, its scenarios that went from passed to failed
    comparison: object  # the analysis.Comparison it rests on

    def as_json(self) -> dict:
        return {"passed": self.passed, "regressions": self.regressions, "broken": self.broken,
                "comparison": self.comparison.as_json()}


@dataclass
class RefreshResult:
    """The scheduled job: what it ingested, what it re-scored, and each new run's gate."""

    ingest: IngestResult
    rescore: RescoreResult
    gates: list[GateResult] = field(default_factory=list)


@dataclass
class CheckResult:
    """What ``Warehouse.check`` found: inconsistencies (the warehouse is not consistent while any
    is listed) and warnings (the data is odd, the warehouse is sound)."""

    runs: int
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not self.problems


@dataclass
class Evidence:
    """One scenario's verdict and what it rests on (``Warehouse.evidence``)."""

    run: str
    policy: str
    scenario: dict  # its scenario_scores row: signals, composite, success_breakdown, flags
    verdicts: pl.DataFrame  # per DB predicate, NL assertion, reference action, tau2 check
    judge: dict | None  # the policy's judge's judgement: judge, score, reason, errored, extra keys
    turns: pl.DataFrame  # the conversation
    tool_calls: pl.DataFrame  # agent then user side, each in order
    reviews: pl.DataFrame  # people's standing verdicts on its signals, items and outcome

    def as_dict(self) -> dict:
        return {"run": self.run, "policy": self.policy, "scenario": self.scenario,
                "verdicts": self.verdicts.to_dicts(), "judge": self.judge, "turns": self.turns.to_dicts(),
                "tool_calls": self.tool_calls.to_dicts(), "reviews": self.reviews.to_dicts()}

