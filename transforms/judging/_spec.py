"""A judge: a name bound to the settings its judgements are made with, and the requests it sends.

Unset settings are each run's own (``run_args.json``: ``--judge-url``, ``--judge-model`` and the
sampling flags of the invocation that produced the scenario), so a judge of no settings asks the
run's own judge again. The payload is upstream's (run-format.md §10): model, the system and user
messages, max_tokens, temperature, top_p, seed, ``chat_template_kwargs`` and, when set,
``thinking_token_budget``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.keys import text_hash
from scorelake.transforms.scoring import RECORDED

# The runner's CLI defaults (run-format.md §15), for run_args.json files that lack a flag.
RUNNER_DEFAULTS = {"judge_url": "http://localhost:8000/v1/chat/completions",
                   "judge_model": "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "judge_max_tokens": 100000,
                   "judge_temperature": 1.0, "judge_top_p": 0.95, "judge_seed": 42,
                   "judge_thinking_token_budget": None, "judge_timeout": 120.0}
# The command line's names of the settings that are not --<setting>.
OPTIONS = {"url": "judge-url", "model": "judge-model", "base": "from"}


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1)
    url: str | None = None  # the full .../v1/chat/completions URL, as upstream takes it
    model: str | None = None
    prompt: str | None = None  # replaces the stored system prompt; the stored user content is kept
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)  # a 64-bit column
    thinking_token_budget: int | None = Field(default=None, gt=0)
    timeout: float | None = Field(default=None, gt=0)
    base: str | None = None  # --only-errors: the judge whose judgements it keeps where they did not fail
    majority_of: str | None = None  # NAME@majority: the majority of NAME's asks (rejudge --repeat), not asked itself

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("not an http:// or https:// URL")
        return value

    @classmethod
    def checked(cls, **fields: Any) -> JudgeSpec:
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise InvalidArgument.of_validation(exc, OPTIONS) from None

    def identity(self) -> dict:
        """What its judgements depend on (all but its name and the timeout)."""
        return self.model_dump(exclude={"name", "timeout"})

    def describe(self) -> str:
        if self.majority_of is not None:
            return f"the majority of judge '{self.majority_of}''s asks (rejudge --repeat)"
        settings = {k: v for k, v in self.identity().items() if v is not None and k != "prompt"}
        if self.prompt is not None:
            settings["prompt"] = f"sha256:{text_hash(self.prompt)[:12]}"
        return ", ".join(f"{k}={v}" for k, v in settings.items()) or "each run's own judge settings"


BUILTIN = JudgeSpec(name=RECORDED)  # the runs' own judge_result.json


@dataclass(frozen=True)
class RunJudge:
    """One invocation's judge settings from run_args.json."""

    url: str
    model: str
    max_tokens: int
    temperature: float
    top_p: float
    seed: int
    thinking_token_budget: int | None
    timeout: float


def run_judge(run_args_json: str | None, invocation: int) -> RunJudge:
    """The judge flags of one invocation of a run (the runner's defaults where absent)."""
    try:
        doc = json.loads(run_args_json or "{}")
    except ValueError:
        doc = {}
    invocations = doc.get("invocations") if isinstance(doc, dict) else None
    if not isinstance(invocations, list):
        invocations = [doc] if isinstance(doc, dict) and doc else []
    entry = invocations[min(invocation, len(invocations) - 1)] if invocations else {}
    parsed = entry.get("parsed_args", entry) if isinstance(entry, dict) else {}
    args = {k: parsed.get(k, v) if isinstance(parsed, dict) else v for k, v in RUNNER_DEFAULTS.items()}
    timeout = args["judge_timeout"]
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        timeout = RUNNER_DEFAULTS["judge_timeout"]  # upstream's argparse would not have let it through
    return RunJudge(url=str(args["judge_url"] or ""), model=str(args["judge_model"] or ""),
                    max_tokens=args["judge_max_tokens"], temperature=args["judge_temperature"],
                    top_p=args["judge_top_p"], seed=args["judge_seed"],
                    thinking_token_budget=args["judge_thinking_token_budget"], timeout=float(timeout))


@dataclass(frozen=True)
class Request:
    url: str
    model: str
    params: dict  # everything but model and messages, in upstream's order
    system_prompt: str
    timeout: float
    key: str  # the cache key

    def payload(self, user_content: str) -> dict:
        return {"model": self.model, "messages": [{"role": "system", "content": self.system_prompt},
                                                  {"role": "user", "content": user_content}], **self.params}


def request(spec: JudgeSpec, run: RunJudge, stored_system_prompt: str, input_hash: str) -> Request:
    """What ``spec`` sends for one stored judge input; its key names the URL and the payload (the
    messages by hash: the stored input's, and the prompt's when one replaces it)."""
    pick = lambda mine, theirs: theirs if mine is None else mine  # noqa: E731
    params = {"max_tokens": pick(spec.max_tokens, run.max_tokens), "temperature": pick(spec.temperature, run.temperature),
              "top_p": pick(spec.top_p, run.top_p), "seed": pick(spec.seed, run.seed),
              "chat_template_kwargs": {"enable_thinking": True}}
    budget = pick(spec.thinking_token_budget, run.thinking_token_budget)
    if budget is not None:
        params["thinking_token_budget"] = budget
    url, model = pick(spec.url, run.url), pick(spec.model, run.model)
    if not url.startswith(("http://", "https://")):
        raise InvalidArgument(f"judge URL '{url}' (--judge-url, else the run's own run_args.json) is not an "
                              "http:// or https:// URL")
    system_prompt = pick(spec.prompt, stored_system_prompt)
    keyed = {"url": url, "model": model, "params": params, "input": input_hash,
             "prompt": None if spec.prompt is None else text_hash(spec.prompt)}
    key = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:32]
    return Request(url, model, params, system_prompt, pick(spec.timeout, run.timeout), key)
