"""Pydantic models of the raw files the upstream runner writes (run-format.md §2-§4, §16).

Models are strict: a value of the wrong JSON type (``"N/A"`` where a bool belongs, a string
for a number) is a validation error, so the scenario is quarantined instead of mis-scored.
Unknown keys are allowed: newer runner versions add keys (``auto_retry_count``, ...).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Strict, field_validator, model_validator, with_config
from typing_extensions import TypedDict

from scorelake.transforms.scoring._signal import NEMO_SIGNALS, Signal
from scorelake.transforms.sources._measures import Count, Millis, Seconds

_STRICT = ConfigDict(strict=True, extra="allow")


class _Strict(BaseModel):
    model_config = _STRICT


class LatencyStats(_Strict):
    count: Count
    mean_ms: Millis
    p50_ms: Millis
    p95_ms: Millis
    min_ms: Millis
    max_ms: Millis


# A turn and a latency are checked as typed dicts, not made models: a scenario has a dozen of them,
# and a model each cost a third of validating its metrics.json.
@with_config(_STRICT)
class Turn(TypedDict, total=False):
    timestamp: str | None
    role: str | None
    text: str | None


@with_config(_STRICT)
class Latency(TypedDict):
    latency_ms: Millis


class SideUsage(_Strict):
    n_calls: Count | None = None
    prompt: Count = 0
    completion: Count = 0


class TokenUsage(_Strict):
    agent: SideUsage | None = None
    user: SideUsage | None = None


class DbAssertionVerdict(_Strict):
    func_name: str | None = None
    side: str | None = None
    passed: bool
    expected: Any = None
    actual: Any = None
    message: str | None = None
    error: str | None = None


class Breakdown(_Strict):
    passed: list[str] = []
    failed: list[str] = []
    not_applicable: list[str] = []
    excluded: list[str] = []


class MetricsFile(_Strict):
    """``<scenario>/metrics.json`` (run-format.md §3)."""

    total_turns: Count
    duration_seconds: Seconds | None = None
    turns: list[Turn] = []
    latency_stats: LatencyStats
    latencies: list[Latency] = []
    scenario_name: str
    scenario_directory: str | None = None
    scenario_duration: Seconds
    stop_reason: str
    clean_exit: bool
    insufficient_agent_turns: bool | None = None
    is_action_match: bool | Literal["N/A"]
    judge_score: float | None = None
    judge_passed: bool | None = None
    token_usage: TokenUsage | None = None
    db_state_expected_hash: str | None = None
    db_state_match: bool | None = None
    db_state_actual_hash: str | None = None
    nl_assertion_pass_rate: float | None = None
    db_state_assertion_verdicts: list[DbAssertionVerdict] | None = None
    db_state_assertion_pass_rate: float | None = None
    success_breakdown: Breakdown
    is_successful: bool | Literal["N/A"]
    is_task_successful: bool | None = None


class NlVerdict(_Strict):
    index: int | None = None
    assertion: str | None = None
    passed: bool
    reason: str | None = None


class JudgeResultFile(_Strict):
    """``<scenario>/judge_result.json`` (run-format.md §4)."""

    score: float
    reason: str | None = None
    nl_assertion_verdicts: list[NlVerdict] | None = None


class MetadataFile(_Strict):
    """``<scenario>/scenario_config/metadata.json`` (run-format.md §16)."""

    name: str
    domain: str | None = None
    ignore_capitalization: bool = False
    ignore_punctuation: bool = False
    clean_text: bool = False
    disallow_extra_items: bool = False
    success_signals: list[Annotated[Signal, Strict(False)]]  # JSON strings, not enum instances
    db_state_assertions: list[dict[str, Any]] | None = None
    nl_assertions: list[str] | None = None
    expected_db_hash: str | None = None
    expected_user_db_hash: str | None = None
    reference_file: str | None = None  # under scenario_config/

    @field_validator("success_signals")
    @classmethod
    def _runner_signals(cls, value: list[Signal]) -> list[Signal]:
        for signal in value:
            if signal not in NEMO_SIGNALS:
                raise ValueError(f"'{signal}' is not a SuccessSignal of the runner")
        return value


class ParsedArgs(_Strict):
    """The scoring-relevant ``argparse`` dests; defaults are the runner CLI's (run-format.md §15)."""

    judge_url: str | None = "http://localhost:8000/v1/chat/completions"
    judge_model: str | None = "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4"
    judge_threshold: float | None = 0.9
    strict_match: bool = False
    min_agent_turns: int = 3
    resume: str | None = None

    @property
    def judge_enabled(self) -> bool:
        # The runner builds its judge only when both URL and model are truthy (§10).
        return bool(self.judge_url) and bool(self.judge_model)


class Invocation(_Strict):
    started_at: str | None = None
    argv: list[str] | None = None
    parsed_args: ParsedArgs = ParsedArgs()
    resolved_scenario_count: int | None = None
    resolved_scenario_names: list[str] | None = None
    resumed_from_invocation: int | None = None


class RunArgsFile(_Strict):
    """``run_args.json`` (run-format.md §2), with the legacy single-object shape wrapped."""

    invocations: list[Invocation]

    @model_validator(mode="before")
    @classmethod
    def _wrap_legacy(cls, data: Any) -> Any:
        if isinstance(data, dict) and "invocations" not in data:
            # Legacy files are one invocation, or a bare argparse namespace.
            entry = data if "parsed_args" in data else {"parsed_args": data}
            return {"invocations": [entry]}
        return data

    @model_validator(mode="after")
    def _not_empty(self) -> RunArgsFile:
        if not self.invocations:
            raise ValueError("run_args.json has an empty 'invocations' list")
        return self


