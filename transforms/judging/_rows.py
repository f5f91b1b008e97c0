"""Judgements as ``judgements`` rows, and scenarios scored with one judge's judgements."""

from __future__ import annotations

import json
import secrets

import polars as pl

from scorelake.transforms.judging._exchange import Answer
from scorelake.transforms.judging._spec import Request, text_hash
from scorelake.transforms.judging._upstream import NL_KEYS


def answer_row(judge: str, answer: Answer, request: Request) -> dict:
    """One asked judgement as a ``judgements`` row (``judged_at`` a datetime)."""
    result = answer.result
    verdicts = result.get("nl_assertion_verdicts") if answer.call.nl_assertions else None
    run_id, scenario_name, input_hash = answer.call.key
    return {
        "judgement_id": secrets.token_hex(12), "judge": judge, "run_id": run_id, "scenario_name": scenario_name,
        "input_hash": input_hash, "request_key": request.key, "model": request.model, "url": request.url,
        "prompt_hash": text_hash(request.system_prompt), "params_json": json.dumps(request.params, sort_keys=True),
        "score": result["score"], "reason": _text(result.get("reason")), "errored": answer.errored,
        "nl_verdicts_json": None if verdicts is None else _utf8(json.dumps(verdicts, ensure_ascii=False)),
        "nl_passed": result.get("nl_assertion_pass_count") if verdicts is not None else None,
        "nl_total": result.get("nl_assertion_total") if verdicts is not None else None,
        "extra_json": _utf8(json.dumps({k: v for k, v in result.items() if k not in ("score", "reason", *NL_KEYS)},
                                       ensure_ascii=False, default=str)),
        "reply": None if answer.reply is None else _utf8(answer.reply),
        "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
        "latency_ms": answer.latency_ms, "attempts": answer.attempts, "source": "asked", "odd_score": answer.odd_score,
        "judged_at": answer.judged_at,
    }


def _text(value: object) -> str | None:
    """Upstream passes the judge's reason through whatever its type; stored as text."""
    return None if value is None else _utf8(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _utf8(text: str) -> str:
    """``text`` as valid UTF-8 (a reply's JSON may escape a lone surrogate, which no table or journal
    can hold): each such character replaced by "?"."""
    return text.encode("utf-8", "replace").decode("utf-8")


def with_judgements(scenarios: pl.LazyFrame, judged: pl.LazyFrame) -> pl.LazyFrame:
    """``scenarios`` with ``judge_score``, ``nl_passed`` and ``nl_total`` taken from ``judged`` (one
    judge's judgements: run_id, scenario_name, score, nl_passed, nl_total) where it has one; other
    scenarios keep their recorded values (upstream asks no judge of them: no input, or no evidence)."""
    right = judged.select("run_id", "scenario_name", pl.lit(True).alias("_judged"),
                          pl.col("score").alias("_score"), pl.col("nl_passed").alias("_nl_passed"),
                          pl.col("nl_total").alias("_nl_total"))
    taken = pl.col("_judged").fill_null(False)
    return (scenarios.join(right, on=["run_id", "scenario_name"], how="left")
            .with_columns(pl.when(taken).then(pl.col(f"_{c}")).otherwise(pl.col(c)).alias(c)
                          for c in ("nl_passed", "nl_total"))
            .with_columns(pl.when(taken).then(pl.col("_score")).otherwise(pl.col("judge_score")).alias("judge_score"))
            .drop("_judged", "_score", "_nl_passed", "_nl_total"))


def without_escalated(scenarios: pl.LazyFrame, escalated: pl.LazyFrame) -> pl.LazyFrame:
    """``scenarios`` with no judge score where the judge's calibration escalates its verdict
    (``escalated``: run_id, scenario_name), so JUDGE_PASSED is not applicable there: a selective
    policy counts the judge's kept verdicts only (people's verdicts still take the place of any)."""
    marked = escalated.select("run_id", "scenario_name", pl.lit(True).alias("_escalated"))
    return (scenarios.join(marked, on=["run_id", "scenario_name"], how="left")
            .with_columns(pl.when(pl.col("_escalated").fill_null(False)).then(None).otherwise(pl.col("judge_score"))
                          .alias("judge_score"))
            .drop("_escalated"))
