"""The evidence behind a verdict, as table rows: the conversation's turns, the tool calls and their
results, the judge's own result, and which reference actions found no match.

Kept whole (texts are not cut) in tables of their own, which no rate view reads. Pure functions of
parsed documents; ``key`` is the row's run_id, generation and scenario_name.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import orjson

from scorelake.transforms.keys import text_hash
from scorelake.transforms.scoring import ActionMatch
from scorelake.transforms.sources._files import dump_json

# judge_result.json keys stored in columns of their own (or as NL-assertion verdicts); the rest is extra.
JUDGE_KEYS = {"score", "reason", "judge_input", "nl_assertion_verdicts", "nl_assertion_pass_count",
              "nl_assertion_total", "nl_assertion_pass_rate"}


def _text(value: Any) -> str | None:
    """A message's content as text: strings as they are, anything else (a list of parts) as JSON."""
    if value is None or isinstance(value, str):
        return value
    return dump_json(value)


def turn_rows(key: dict, turns: list[dict], latencies: list[dict] | None) -> list[dict]:
    """``metrics.json`` turns; an agent turn that answered a user turn carries that exchange's latency
    (``metrics.latencies`` pairs them by transcript, in order)."""
    rows = [{**key, "ordinal": i + 1, "role": t.get("role"), "text": _text(t.get("text")),
             "timestamp": t.get("timestamp"), "latency_ms": None} for i, t in enumerate(turns)]
    at = 0
    for exchange in latencies or []:
        for row in rows[at:]:
            at += 1
            if row["role"] == "agent" and row["text"] == exchange.get("agent_transcript"):
                row["latency_ms"] = exchange.get("latency_ms")
                break
    return rows


def message_turn_rows(key: dict, messages: list[dict]) -> list[dict]:
    """A tau2 / tau-bench message list as turns: every message that says something (tool results are
    the tool calls' business)."""
    rows = []
    for message in messages:
        role, content = message.get("role"), _text(message.get("content"))
        if role in ("tool", "system") or not content:
            continue
        rows.append({**key, "ordinal": len(rows) + 1, "role": role, "text": content,
                     "timestamp": _text(message.get("timestamp")), "latency_ms": None})
    return rows


def _call(call: dict) -> tuple[str | None, str | None, Any]:
    """(id, name, arguments) of a tool call in OpenAI's shape (``function: {name, arguments}``) or tau2's."""
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    return call.get("id"), function.get("name"), function.get("arguments")


def _heard(messages: list, heard_turns: list[str] | None) -> list[int]:
    """Per message, how many of the other party's turns came before it (and with it): its context's
    user messages (in a simulated user's own context, the agent's words are its user messages),
    each matched by its text to the next of ``heard_turns`` (the transcript's turns of the other
    party) when given, since a runner's context can hold messages the transcript has not (a
    synthetic opening "Hello") and miss some it has."""
    turns = None if heard_turns is None else [(turn or "").strip() for turn in heard_turns]
    counts, heard, at = [], 0, 0
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user" and message.get("content"):
            if turns is None:
                heard += 1
            else:
                text = (_text(message.get("content")) or "").strip()
                match = next((i for i in range(at, len(turns)) if turns[i] == text), None)
                if match is not None:
                    heard = at = match + 1
        counts.append(heard)
    return counts


def tool_call_rows(key: dict, side: str, messages: list, heard_turns: list[str] | None = None) -> list[dict]:
    """Every tool call of an LLM message list, in order, with the result the tool returned (the
    ``tool`` message answering its id) and the turn of the other party it answers (see ``_heard``)."""
    if not any(isinstance(message, dict) and message.get("tool_calls") for message in messages):
        return []  # most contexts (a simulated user's always) call no tool
    results = {}
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "tool":
            results[message.get("tool_call_id") or message.get("id")] = _text(message.get("content"))
    rows = []
    heard = _heard(messages, heard_turns)
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            call_id, name, arguments = _call(call)
            if isinstance(arguments, str):  # OpenAI's shape: the arguments as JSON text
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    pass
            rows.append({**key, "side": side, "ordinal": len(rows) + 1, "message_index": index,
                         "replies_to_turn": heard[index], "call_id": _text(call_id), "name": _text(name),
                         "arguments_json": dump_json(arguments),
                         "result": results.get(call_id), "requestor": _text(call.get("requestor"))})
    return rows


def task_rows(key: dict, instructions: str | None, origin: str) -> tuple[list[dict], list[dict]]:
    """What the user simulator was told (none when blank or absent): the scenario's ``tasks`` row,
    naming its instructions by hash, and the ``task_instructions`` row holding them."""
    if not instructions or instructions.isspace():
        return [], []
    instructions_hash = text_hash(instructions)
    return ([{**key, "instructions": None, "origin": origin, "instructions_hash": instructions_hash}],
            [{"instructions_hash": instructions_hash, "instructions": instructions}])


def judge_row(key: dict, doc: dict) -> dict:
    """``judge_result.json``: score, reason, whether the judge itself failed (upstream's ``Error: ...``
    reason: the endpoint down, or a reply it could not parse) and every extra key the judge returned
    (confidence, deductions, ...). Its input (``judge_input``, mostly the reference, prediction and
    conversation, ten times the rest in bytes) is a table of its own: see ``judge_input_row``."""
    reason = doc.get("reason")
    score = doc.get("score")
    return {**key, "score": float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
            "reason": _text(reason), "errored": isinstance(reason, str) and reason.startswith("Error:"),
            "extra_json": dump_json({k: v for k, v in doc.items() if k not in JUDGE_KEYS})}


# Upstream's reason when it asks no judge: nothing the agent did was observed (run-format.md §4).
NO_EVIDENCE_REASON = "No observed agent evidence was provided."


@functools.lru_cache(maxsize=8)
def _prompt(system_prompt: str) -> tuple[str, Any]:
    """A system prompt's ``prompt_hash`` and the input hash's state after ``[<prompt>, `` (None where
    orjson refuses the prompt): worked out once per prompt, since the same one opens every input of a run."""
    try:
        opening = hashlib.sha256(b"[" + orjson.dumps(system_prompt) + b", ")
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        opening = None
    return text_hash(system_prompt), opening


def input_hash(system_prompt: str, user_content: str, nl_assertions: list[str] | None) -> str:
    """The judge input's key: a hash of ``json.dumps([system_prompt, user_content, nl_assertions],
    ensure_ascii=False)``. Written by orjson, whose strings escape exactly as json's do (ten times
    faster on a long prompt); json's own for what orjson refuses (a lone surrogate)."""
    opening = _prompt(system_prompt)[1]
    try:
        rest = b"%b, [%b]]" % (orjson.dumps(user_content), b", ".join(orjson.dumps(a) for a in nl_assertions or []))
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        rest = None
    if opening is None or rest is None:
        blob = json.dumps([system_prompt, user_content, nl_assertions or []], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    digest = opening.copy()
    digest.update(rest)
    return digest.hexdigest()[:32]


def judge_input_rows(key: dict, doc: dict, nl_assertions: list[str] | None) -> tuple[list[dict], list[dict]]:
    """What the judge was asked (``judge_input``: system prompt and user content) and the NL assertions
    its reply is normalised against: enough to ask any judge again. As a ``judge_inputs`` row naming
    its system prompt by hash and the ``judge_prompts`` row holding it; none when upstream stored no
    input (the "No judge evidence" early return)."""
    asked = doc.get("judge_input")
    if not isinstance(asked, dict) or not all(isinstance(asked.get(k), str) for k in ("system_prompt", "user_content")):
        return [], []
    assertions = [a for a in nl_assertions if isinstance(a, str)] if nl_assertions else None
    reason = doc.get("reason")
    system_prompt = asked["system_prompt"]
    prompt_hash = _prompt(system_prompt)[0]
    return ([{**key, "system_prompt": None, "prompt_hash": prompt_hash, "user_content": asked["user_content"],
              "nl_assertions": assertions or None,
              "input_hash": input_hash(system_prompt, asked["user_content"], assertions),
              "askable": not (isinstance(reason, str) and reason.startswith(NO_EVIDENCE_REASON))}],
            [{"prompt_hash": prompt_hash, "system_prompt": system_prompt}])


def action_verdict_rows(key: dict, action: ActionMatch) -> list[dict]:
    """ACTION_MATCH item by item: a ``verdicts`` row (kind ``action``) per reference item, passed
    when a prediction item matched it, with both items."""
    rows = []
    for i, (reference, matched) in enumerate(zip(action.references, action.matched), start=1):
        prediction = action.predictions[matched] if matched is not None else None
        rows.append({**key, "kind": "action", "ordinal": i,
                     "label": _text(reference.get("name")) if isinstance(reference, dict) else None,
                     "side": _text(reference.get("side")) if isinstance(reference, dict) else None,
                     "passed": matched is not None, "expected_json": dump_json(reference),
                     "actual_json": None if matched is None else dump_json(prediction),
                     "arguments_json": None, "detail": None if matched is not None else "no prediction item matched this reference item",
                     "error": None})
    return rows
