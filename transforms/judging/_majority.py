"""A judge asked K times (``rejudge --repeat K``): its asks are judges of their own, ``NAME#1`` to
``NAME#K`` (the k-th sends seed S + k), and ``NAME@majority`` is the judge whose judgement of an
input is the majority of the asks' judgements.

The majority's score is the asks' ``⌊n/2⌋ + 1``-th highest score: the median for an odd number of
asks, the lower middle one for an even number. So at any threshold its verdict (score >= threshold)
is the majority's: more than half the asks passed. Each NL assertion passes when more than half
the asks that graded it passed it. A NaN score fails at every threshold, as upstream compares it,
so it counts as the lowest.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime

import polars as pl

from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument
from scorelake.transforms.names import ASK, MAJORITY

KEY = ["run_id", "scenario_name", "input_hash"]
NL_VERDICTS = pl.List(pl.Struct({"index": pl.Int64, "assertion": pl.String, "passed": pl.Boolean,
                                 "reason": pl.String}))


def ask_name(judge: str, k: int) -> str:
    return f"{judge}{ASK}{k}"


def majority_name(judge: str) -> str:
    return f"{judge}{MAJORITY}"


def check_judge_name(name: str) -> None:
    """A judge a person names: ``#`` and ``@`` mark the asks of a repeated judge and its majority."""
    if ASK in name or "@" in name:
        raise InvalidArgument(f"judge name '{name}': '#' and '@' are kept for the asks of a repeated judge "
                              f"(NAME#k) and their majority (NAME{MAJORITY})")


def majority_judgements(asks: pl.LazyFrame, judge: str) -> pl.DataFrame:
    """``judge``'s majority judgement of each input, from ``asks``: the latest judgements of its
    asks (``judgements`` rows), as ``judgements`` rows of the judge ``NAME@majority``."""
    ordered = pl.col("score").fill_nan(None).sort(descending=True, nulls_last=True)
    whole = asks.group_by(KEY).agg(
        pl.len().alias("asks"), ordered.get(pl.len() // 2).alias("score"), ordered.alias("scores"),
        pl.col("errored").all().alias("errored"), pl.col("odd_score").any().alias("odd_score"),
        pl.col("model").first(), pl.col("url").first(), pl.col("prompt_hash").first())
    nl = (asks.filter(pl.col("nl_verdicts_json").is_not_null())
          .select(*KEY, pl.col("nl_verdicts_json").str.json_decode(NL_VERDICTS).alias("verdict"))
          .explode("verdict").unnest("verdict")
          .group_by(*KEY, "index").agg(pl.col("assertion").first(), pl.col("passed").sum().alias("passes"),
                                       pl.len().alias("votes"))
          .sort("index")
          .group_by(KEY).agg(pl.struct("index", "assertion", "passes", "votes").alias("nl")))
    now = datetime.now(UTC)
    rows = []
    for r in whole.join(nl, on=KEY, how="left").sort(KEY).collect().iter_rows(named=True):
        verdicts = [{"index": v["index"], "assertion": v["assertion"], "passed": v["passes"] > v["votes"] / 2,
                     "reason": f"{v['passes']} of {v['votes']} asks passed it"} for v in r["nl"] or []]
        rows.append({
            "judgement_id": secrets.token_hex(12), "judge": majority_name(judge), "run_id": r["run_id"],
            "scenario_name": r["scenario_name"], "input_hash": r["input_hash"],
            "request_key": f"majority:{judge}", "model": r["model"], "url": r["url"], "prompt_hash": r["prompt_hash"],
            "params_json": json.dumps({"majority_of": judge, "asks": r["asks"]}),
            "score": r["score"], "reason": f"the majority of {r['asks']} asks of judge '{judge}'",
            "errored": r["errored"],
            "nl_verdicts_json": json.dumps(verdicts, ensure_ascii=False) if r["nl"] else None,
            "nl_passed": sum(v["passed"] for v in verdicts) if r["nl"] else None,
            "nl_total": len(verdicts) if r["nl"] else None,
            "extra_json": json.dumps({"asks": r["asks"], "scores": r["scores"]}),
            "prompt_tokens": None, "completion_tokens": None, "latency_ms": None, "attempts": 0,
            "source": "majority", "odd_score": r["odd_score"], "judged_at": now})
    return frame("judgements", rows)
