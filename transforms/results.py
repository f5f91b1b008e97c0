"""What the API's commands answer, as types: the command line, the viewer and the flows share them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, TypeVar

import polars as pl

T = TypeVar("T")


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
    # why a source another package registers (entry point group scorelake.sources) was left out
    source_problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExportResult:
    endpoint: str
    policy: str
    scenarios: int  # scenarios whose verdicts were sent (those sent before are not sent again)
    events: int  # evaluation events they carried


@dataclass
class RescoreResult:
    warehouse: str
    scored: dict[str, int]  # policy name -> scenarios scored
    policy: str | None = None  # the policy a ``Warehouse.rescore`` defined or reused
    policy_id: str | None = None
    judge: str | None = None
    converted: str | None = None
    ran: str = ""
    undecided: int = 0  # reviewed keys where no verdict stands under the policy's review rule (a tie, no ruling)
    review_rule: str | None = None

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
    asks: int = 1  # rejudge --repeat: the judge's asks (each counted above), their majority stored too


@dataclass
class ReviewResult:
    """What a review (or an import of reviews) stored."""

    stored: int  # reviews
    made_on: int  # the warehouse version the reviewers saw
    version: int  # the warehouse version the reviews made


@dataclass
class RefreshResult:
    """The scheduled job: what it ingested, what it re-scored, and each new run's gate."""

    ingest: IngestResult
    rescore: RescoreResult
    gates: list = field(default_factory=list)  # each new run's analysis.GateResult (analysis sits above)
    exported: ExportResult | None = None  # the new runs' verdicts sent on (serve --export-otlp)


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


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation (the ``turns`` table)."""

    ordinal: int
    role: str  # user | assistant (the agent)
    text: str | None
    timestamp: str | None
    latency_ms: float | None  # an agent turn's response latency


@dataclass(frozen=True)
class ToolCall:
    """One tool call (the ``tool_calls`` table): the agent's, or a simulated user's (``side``)."""

    side: str
    ordinal: int
    message_index: int | None
    replies_to_turn: int | None  # the other party's turn it answers (its k-th); None: read by an older scorelake
    call_id: str | None
    name: str
    arguments_json: str | None
    result: str | None
    requestor: str | None


@dataclass(frozen=True)
class ItemVerdict:
    """One item a signal rests on: a DB predicate, an NL assertion, a reference action, a tau2 check."""

    kind: str  # db_state_assertion | nl_assertion | action | communicate
    ordinal: int
    label: str | None
    side: str | None
    passed: bool | None
    expected_json: str | None
    actual_json: str | None
    arguments_json: str | None
    detail: str | None
    error: str | None


@dataclass(frozen=True)
class Judgement:
    """The policy's judge's judgement of a scenario."""

    judge: str
    score: float | None
    reason: str | None
    errored: bool | None  # the judge itself failed (not the agent)
    extra_json: str | None  # the reply's other keys (confidence, deductions)
    reply: str | None = None  # the model's message as it came (None: the run's own judge_result.json, or none)


@dataclass(frozen=True)
class JudgeInput:
    """What a scenario's judge was asked (judge_result.json's judge_input)."""

    system_prompt: str | None
    user_content: str | None
    nl_assertions: list[str] | None


@dataclass(frozen=True)
class Task:
    """What a scenario asked of the agent: the user simulator's instructions, and where they were read."""

    instructions: str
    origin: str


@dataclass(frozen=True)
class Interval:
    """A stretch of a conversation, in seconds from its start."""
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class TimelineSegment:
    """One speaker's segment as drawn: ``end`` clipped to ``LONG_SEGMENT_S`` after its start,
    ``logged_end`` as logged."""
    speaker: str  # "agent" or "user"
    start: float
    end: float
    logged_end: float
    words: str

    @property
    def clipped(self) -> bool:
        return self.logged_end > self.end


@dataclass(frozen=True)
class TimelineResponse:
    """A user turn's end and the start of the agent's answer to it (tau2's response event)."""
    turn_end: float
    answer: float

    @property
    def latency_s(self) -> float:
        return self.answer - self.turn_end


@dataclass(frozen=True)
class SpeechTimeline:
    """A scenario's speech, measured for drawing (``Warehouse.speech_timeline``): both lanes'
    segments, where both speak, the long silences, the response events, the dead air at the end."""
    start: float
    end: float
    segments: tuple[TimelineSegment, ...]
    overlaps: tuple[Interval, ...]
    long_silences: tuple[Interval, ...]
    responses: tuple[TimelineResponse, ...]
    dead_air_after_s: float  # the silence after the last speech, when long (0 otherwise)
    call_end: str | None  # how the call ended (exit, timeout, error)

    @property
    def span(self) -> float:
        return max(self.end - self.start, 1e-6)


@dataclass(frozen=True)
class HeardTurns:
    """What the agent heard of each user turn, the turns aligned (the voice panel's user_to_agent columns)."""

    heard_json: str  # [said, heard] per aligned turn, null on the side that has none
    user_to_agent_turns_missing: int | None
    user_to_agent_turns_duplicated: int | None
    user_to_agent_turns_undelivered: int | None
    user_to_agent_turns_extra: int | None
    user_to_agent_wer: float | None

    @property
    def pairs(self) -> list[tuple[str | None, str | None]]:
        return [(said, heard) for said, heard in json.loads(self.heard_json)]


@dataclass(frozen=True)
class StandingReview:
    """A person's verdict that stands on a signal, an item of it (``assertion``) or the outcome."""

    signal: str
    assertion: int | None
    verdict: str  # pass | fail; undecided: a policy's rule let none stand (a tie, no ruling yet)
    reviewer: str  # or, under a majority or adjudicated rule, by whom in words ("the majority of 3 reviewers")
    note: str | None
    reviewed_at: datetime


@dataclass(frozen=True)
class Headline:
    """A run in one line (``Warehouse.headlines``): whole-run success with its 95% Wilson interval,
    the change from the run before it in its group on their paired scenarios, the judge's errors,
    the stalled scenarios and the domain with the lowest success rate."""

    run_id: str
    run_group: str | None
    scenarios: int
    success_passed: int
    success_total: int
    success_rate: float | None
    success_ci_low: float | None
    success_ci_high: float | None
    previous_run: str | None  # None: the first run of its group
    pairs: int  # scenarios both runs ran with the same definition
    broken: int  # passed before, failed now
    fixed: int
    change: str | None  # improved, regressed, inconclusive or unchanged (exact McNemar), None without pairs
    judge_errors: int
    judge_only: int  # scenarios the judge's error alone failed
    stalled: int
    worst_domain: str | None  # None when the run has one domain
    worst_passed: int | None
    worst_total: int | None


def records(kind: type[T], frame: pl.DataFrame) -> list[T]:
    """``frame``'s rows as ``kind`` records (its fields taken by name)."""
    names = [f.name for f in fields(kind)]
    return [kind(*row) for row in frame.select(names).iter_rows()]


@dataclass(frozen=True)
class ScenarioRow:
    """One scenario as scored under a policy (its ``scenario_scores`` row, with what ACTION_MATCH
    compared): the facts a face reads, typed, and every column (``columns``: what ``--format json``
    gives); a declared signal's value or item count by the name its declaration gives (``value``)."""

    run_id: str
    scenario_name: str
    domain: str
    source: str | None
    policy_id: str
    judge: str | None
    stop_reason: str | None
    total_turns: int | None
    agent_turns: int | None
    min_agent_turns: int | None
    stalled: bool | None
    success_signals: list[str] | None
    passed: list[str] | None
    failed: list[str] | None
    not_applicable: list[str] | None
    excluded: list[str] | None
    is_successful: bool | None
    is_task_successful: bool | None
    judge_score: float | None
    judge_threshold: float | None
    strict_match: bool | None
    expected_db_hash: str | None
    actual_db_hash: str | None
    reference_json: str | None
    prediction_json: str | None
    ignore_capitalization: bool | None
    ignore_punctuation: bool | None
    clean_text: bool | None
    disallow_extra_items: bool | None
    unreviewed: str | None
    columns: dict[str, Any]

    @classmethod
    def of(cls, row: dict[str, Any]) -> ScenarioRow:
        return cls(**{f.name: row.get(f.name) for f in fields(cls) if f.name != "columns"}, columns=row)

    def value(self, column: str) -> Any:
        """The value of a column the row has (a signal's ``scores`` value, its item counts):
        ``KeyError`` for one it has not, never a silent None."""
        return self.columns[column]


@dataclass
class Evidence:
    """One scenario's verdict and what it rests on (``Warehouse.evidence``)."""

    run: str
    policy: str
    scenario: ScenarioRow  # its scenario_scores row (docs/reference/views.md): signals, composite, breakdown, flags
    verdicts: list[ItemVerdict]  # per DB predicate, NL assertion, reference action, tau2 check
    judge: Judgement | None  # the policy's judge's judgement
    turns: list[Turn]  # the conversation
    tool_calls: list[ToolCall]  # agent then user side, each in order
    reviews: list[StandingReview]  # people's standing verdicts on its signals, items and outcome
    judge_input: JudgeInput | None = None  # what its judge was asked (None: no judge input stored)
    task: Task | None = None  # what it asked of the agent (None: no instructions stored)
    heard: HeardTurns | None = None  # what the agent heard of each user turn (None: no contexts stored)

    def as_dict(self) -> dict:
        return {"run": self.run, "policy": self.policy, "scenario": self.scenario.columns,
                "verdicts": [asdict(v) for v in self.verdicts], "judge": self.judge and asdict(self.judge),
                "turns": [asdict(t) for t in self.turns], "tool_calls": [asdict(c) for c in self.tool_calls],
                "reviews": [asdict(r) for r in self.reviews],
                "judge_input": self.judge_input and asdict(self.judge_input),
                "task": self.task and asdict(self.task),
                "heard": self.heard and {**asdict(self.heard), "pairs": self.heard.pairs}}
