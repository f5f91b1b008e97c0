"""The judgement as upstream's ``LLMJudge.judge_scenario`` makes it from a chat-completions reply
(run-format.md sections 4 and 10), operation for operation, so that every branch, every exception
and so every ``Error: ...`` reason comes out as upstream's would.

Upstream parses ``response.json()["choices"][0]["message"]["content"]``: ``json.loads`` of it, else
the first fenced ```` ```json {...} ``` ```` block, else the first flat ``{...}`` with a numeric
``"score"``; then ``float()`` of the score and ``reason`` defaulted to ``""``. With NL assertions, the
verdicts are normalised to exactly N entries in numbered order, ``passed`` only when it is the JSON
``true``. Anything that raises on the way is score 0.0, reason ``"Error: <exception>"``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scorelake.transforms.names import MISSING_VERDICT

_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_FLAT_WITH_SCORE = re.compile(r'\{[^{}]*"score"\s*:\s*[\d.]+[^{}]*\}')
NL_KEYS = ("nl_assertion_verdicts", "nl_assertion_pass_count", "nl_assertion_total", "nl_assertion_pass_rate")


def reply_content(body: bytes | str) -> Any:
    """The message content of a chat-completions response body (raises as upstream's indexing does)."""
    return json.loads(body)["choices"][0]["message"]["content"]


def reply_text(body: bytes | str) -> str:
    """What the judge answered, as a reader wants it: the message content of the reply, else its body."""
    try:
        content = reply_content(body)
    except Exception:  # no chat-completions reply: the body is what the judge said
        return body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def parse_content(content: Any) -> Any:
    """Upstream's ``_parse_response`` after the HTTP status check: the judgement object, or raises."""
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        pass
    match = _FENCED.search(content)
    if match:
        return json.loads(match.group(1))
    match = _FLAT_WITH_SCORE.search(content)
    if match:
        return json.loads(match.group(0))
    raise ValueError(f"Could not parse judgement JSON from LLM response: {content}")


def _failed_verdicts(nl_assertions: list[str], reason: str) -> dict:
    return {"nl_assertion_verdicts": [{"index": i + 1, "assertion": a, "passed": False, "reason": reason}
                                      for i, a in enumerate(nl_assertions)],
            "nl_assertion_pass_count": 0, "nl_assertion_total": len(nl_assertions), "nl_assertion_pass_rate": 0.0}


def _normalised_verdicts(result: dict, nl_assertions: list[str]) -> dict:
    by_index: dict[int, dict] = {}
    for v in result.get("nl_assertion_verdicts") or []:  # a non-iterable raises: upstream's error path
        if not isinstance(v, dict):
            continue
        try:
            idx = int(v.get("index"))
        except (TypeError, ValueError):
            continue
        if 1 <= idx <= len(nl_assertions):
            by_index[idx] = v  # a duplicate index: the last one
    verdicts, passes = [], 0
    for i in range(1, len(nl_assertions) + 1):
        v = by_index.get(i)
        passed = bool(v and v.get("passed") is True)
        reason = (v or {}).get("reason", "") if v else MISSING_VERDICT
        verdicts.append({"index": i, "assertion": nl_assertions[i - 1], "passed": passed, "reason": reason})
        passes += passed
    return {"nl_assertion_verdicts": verdicts, "nl_assertion_pass_count": passes,
            "nl_assertion_total": len(nl_assertions), "nl_assertion_pass_rate": passes / len(nl_assertions)}


def judged(body: bytes | str, nl_assertions: list[str] | None) -> tuple[dict, bool]:
    """Upstream's judge result (without ``judge_input``) from the body of a successful reply, and
    whether its score was odd: one upstream's ``float()`` takes that is no number from 0 to 1 (``true``,
    a string, ``Infinity``, NaN, or a number outside 0-1)."""
    try:
        result = parse_content(reply_content(body))
        raw = result["score"]
        result["score"] = float(raw)
        result.setdefault("reason", "")
        if nl_assertions:
            result.update(_normalised_verdicts(result, nl_assertions))
        return result, isinstance(raw, (bool, str)) or not 0 <= result["score"] <= 1
    except Exception as exc:  # upstream's own catch-all: every failure is a 0.0 judgement
        return error_judgement(str(exc), nl_assertions), False


def judgement(body: bytes | str, nl_assertions: list[str] | None) -> dict:
    """Upstream's judge result (without ``judge_input``) from the body of a successful reply."""
    return judged(body, nl_assertions)[0]


def error_judgement(error: str, nl_assertions: list[str] | None) -> dict:
    """Upstream's result when the request or its parse raised ``error``."""
    result = {"score": 0.0, "reason": f"Error: {error}"}
    if nl_assertions:
        result.update(_failed_verdicts(nl_assertions, f"Judge error: {error}"))
    return result


def http_error(status: int, reason_phrase: str, url: str) -> str:
    """What ``requests``' ``raise_for_status`` says of an error status (upstream's HTTP client)."""
    kind = "Client Error" if status < 500 else "Server Error"
    return f"{status} {kind}: {reason_phrase} for url: {url}"
