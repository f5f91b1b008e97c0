"""One exchange with a judge, as data: the call asked and the answer it got (``judge_client`` makes
them; ``answer_row`` stores an answer)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Call:
    key: tuple[str, str, str]  # run_id, scenario_name, input_hash
    url: str
    payload: dict
    timeout: float
    nl_assertions: list[str] | None


@dataclass
class Answer:
    call: Call
    result: dict  # upstream's judge result
    errored: bool
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    attempts: int
    judged_at: datetime
    unanswered: bool = False  # no usable reply (an HTTP error, a timeout, no connection, an unreadable reply)
    transient: bool = False  # ... for a passing reason, after every retry (down, overloaded, timing out)
    odd_score: bool = False  # a score upstream's float() took that is no number from 0 to 1 (true, Infinity, 7)
    reply: str | None = None  # the model's message as it came (the body where it holds none), before the parse
