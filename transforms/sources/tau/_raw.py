"""Pydantic models of tau2-bench and tau-bench results files (lenient: only what scoring reads is checked)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Strict, model_validator

from scorelake.transforms.sources._measures import Count, Seconds


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class Tau2Check(_Lenient):
    met: bool


class Tau2EnvAssertion(Tau2Check):
    env_assertion: dict[str, Any] = {}


class Tau2NlAssertion(Tau2Check):
    nl_assertion: str | None = None
    justification: str | None = None


class Tau2ActionCheck(_Lenient):
    action: dict[str, Any] = {}
    action_match: bool


class Tau2DbCheck(_Lenient):
    db_match: bool


class Tau2RewardInfo(_Lenient):
    reward: float
    db_check: Tau2DbCheck | None = None
    env_assertions: list[Tau2EnvAssertion] | None = None
    action_checks: list[Tau2ActionCheck] | None = None
    nl_assertions: list[Tau2NlAssertion] | None = None
    communicate_checks: list[dict[str, Any]] | None = None
    reward_basis: list[str] | None = None


class Tau2Simulation(_Lenient):
    """One ``SimulationRun`` of a tau2-bench results file (tau2-notes.md §3)."""

    id: str | None = None
    task_id: Annotated[str, Strict(False)]
    trial: Count = 0
    termination_reason: str
    duration: Seconds | None = None
    reward_info: Tau2RewardInfo | None = None
    messages: list[dict[str, Any]] = []
    ticks: list[Any] | None = None  # τ-voice (full-duplex): what each side did in each tick

    @model_validator(mode="before")
    @classmethod
    def _task_id_as_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("task_id"), int):
            data = {**data, "task_id": str(data["task_id"])}
        return data


class Tau2EnvironmentInfo(_Lenient):
    domain_name: str | None = None


class Tau2Info(_Lenient):
    environment_info: Tau2EnvironmentInfo | None = None


class Tau2Header(_Lenient):
    """What a tau2 results file says of the run beside its simulations (tau2-notes.md §3)."""

    timestamp: str | None = None
    info: Tau2Info | None = None
    tasks: list[dict[str, Any]] | None = None


class TauBenchOutcome(_Lenient):
    r_actions: float | None = None  # the DB-hash check: 1.0 when the final database matched


class TauBenchRewardInfo(_Lenient):
    reward: float
    info: TauBenchOutcome = TauBenchOutcome()


class TauBenchInfo(_Lenient):
    reward_info: TauBenchRewardInfo | None = None
    task: dict[str, Any] | None = None  # its ``instruction``: what the user simulator was told


class TauBenchRecord(_Lenient):
    """One ``EnvRunResult`` of a tau-bench (v1) trajectory file (tau-bench/SOURCE.md)."""

    task_id: Count
    reward: float
    trial: Count = 0
    info: TauBenchInfo = TauBenchInfo()
    traj: list[dict[str, Any]] = []

