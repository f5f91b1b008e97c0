"""An Inspect AI log's rows: the log a run, its task a domain, each sample of each epoch a scenario
(its task id the task and the sample's id; its trial the epoch, for pass^k), each scorer's value a
verdict of NL_ASSERTION with its explanation (the signal's pass rate: the scorers that gave full
credit), a model-graded scorer's value and reason the recorded judge's, the messages and tool calls
the evidence, the solver model's token usage the agent's cost.

A scorer's value counts as Inspect's ``value_to_float`` maps it (``to_float``: "C" 1, "P" 0.5, "I"
and "N" 0, numbers as they are), stored beside the value (``verdicts.actual_json``: value, counts_as);
the ``scorer_metrics`` view recomputes each scorer's metrics from them as Inspect does (the mean over
a sample's epochs, then the mean and its standard error over the samples that were scored). A sample that errored has no scores (Inspect leaves it
out of its metrics) and fails; one stopped by a limit is scored as Inspect scored it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorelake.transforms.sources._evidence import judge_row, message_turn_rows, task_rows, tool_call_rows
from scorelake.transforms.sources._files import BadInput, SessionTables, dump_json
from scorelake.transforms.sources._kit import ItemRows, collect_items, quarantined_run, run_row, scenario_row
from scorelake.transforms.sources._session import Session
from scorelake.transforms.sources.inspect._document import Document

KIND = "inspect"
MODEL_GRADED = "model_graded"  # the prefix of Inspect's model-graded scorers (model_graded_qa, _fact)


def _text(content: Any) -> str:
    """A message's content as text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _messages(messages: Any) -> list[dict]:
    """Inspect's chat messages in the shape the evidence readers take (tau2's): a tool call's
    ``function`` is its name, its ``arguments`` an object."""
    shaped = []
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            continue
        calls = [{"id": c.get("id"), "name": c.get("function"), "arguments": c.get("arguments")}
                 for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        shaped.append({"role": m.get("role"), "content": _text(m.get("content")), "tool_calls": calls or None,
                       "tool_call_id": m.get("tool_call_id")})
    return shaped


def _input_text(value: Any) -> str | None:
    return value if isinstance(value, str) else (
        "\n".join(_text(m.get("content")) for m in value if isinstance(m, dict)) if isinstance(value, list) else None)


def to_float(value: Any) -> float:
    """Inspect's ``value_to_float()``: the value as the metrics count it."""
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value in ("I", "N"):
        return 0.0
    if isinstance(value, (int, float, bool)):
        return float(value)
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(lowered)
        except ValueError:
            return 0.0
        return number if number == number and abs(number) != float("inf") else 0.0
    return 0.0


def _rows(session: Session, generation: str, fingerprint: str, sample: Any, task: str, model: str | None,
          scorers: list[str]) -> ItemRows:
    if not isinstance(sample, dict) or "id" not in sample:
        raise BadInput(session.path.name, "schema violation: a sample without an id")
    epoch = int(sample.get("epoch") or 1)
    name = f"{task}__{sample['id']}__epoch{epoch}"
    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    order = [s for s in scorers if s in scores] + sorted(set(scores) - set(scorers))
    values = {s: to_float((scores[s] or {}).get("value")) for s in order}
    error, limit = sample.get("error"), sample.get("limit")
    messages = _messages(sample.get("messages"))
    usage = (sample.get("model_usage") or {}).get(model) or {}
    row = scenario_row(session, generation, fingerprint)
    row.update(
        scenario_name=name, domain=task, registry_domain=task, task_id=f"{task}__{sample['id']}", trial=epoch - 1,
        success_signals=["nl_assertion"], judge_ran=bool(scores), nl_total=max(len(scorers), len(order)),
        nl_passed=sum(v == 1.0 for v in values.values()), total_turns=len(messages),
        agent_n_calls=sum(1 for m in messages if m["role"] == "assistant"),
        agent_prompt_tokens=usage.get("input_tokens"), agent_completion_tokens=usage.get("output_tokens"),
        duration_seconds=sample.get("total_time"), scenario_duration=float(sample.get("total_time") or 0.0),
        stop_reason="error" if error else f"limit: {limit.get('type')}" if isinstance(limit, dict) else "completed",
    )
    key = {"run_id": session.run_id, "generation": generation, "scenario_name": name}
    verdicts = [{**key, "kind": "nl_assertion", "ordinal": n, "label": scorer, "side": "scorer",
                 "passed": values[scorer] == 1.0, "expected_json": dump_json(sample.get("target")),
                 "actual_json": json.dumps({"value": (scores[scorer] or {}).get("value"), "counts_as": values[scorer]}),
                 "arguments_json": None,
                 "detail": (scores[scorer] or {}).get("explanation"),
                 "error": None} for n, scorer in enumerate(order, 1)]
    graded = next((s for s in order if s.startswith(MODEL_GRADED)), None)
    evidence: dict[str, list] = {"turns": message_turn_rows(key, messages),
                                 "tool_calls": tool_call_rows(key, "agent", messages)}
    if graded is not None:
        row.update(judge_score=values[graded], rec_judge_threshold=1.0)
        evidence["judge_results"] = [judge_row(key, {"score": values[graded],
                                                     "reason": (scores[graded] or {}).get("explanation")})]
    evidence["tasks"], evidence["task_instructions"] = task_rows(key, _input_text(sample.get("input")),
                                                                 "inspect sample input")
    return row, verdicts, evidence


def read_inspect(session: Session, generation: str, fingerprint: str,
                 document: Callable[[Path], Document]) -> SessionTables:
    """A log's rows: a sample that cannot be read is a quarantine row, the others are read."""
    try:
        header, samples = document(session.path)
        spec = header.get("eval") if isinstance(header.get("eval"), dict) else None
        if spec is None or not isinstance(spec.get("task"), str):
            raise BadInput(session.path.name, "schema violation at eval.task: not an Inspect log")
    except BadInput as err:
        return quarantined_run(session, generation, fingerprint, KIND, err)
    task, model = spec["task"], spec.get("model")
    results = header.get("results") if isinstance(header.get("results"), dict) else {}
    scorers = [s.get("name") for s in results.get("scores") or [] if isinstance(s, dict) and s.get("name")]

    def reader(load: Callable[[], Any]) -> Callable[[], ItemRows]:
        return lambda: _rows(session, generation, fingerprint, load(), task, model, scorers)

    rows, verdicts, quarantine, errors, evidence = collect_items(session, generation,
                                                                 [(where, reader(load)) for where, load in samples])
    run = run_row(session, generation, fingerprint, KIND, spec.get("created"), len(samples), len(rows),
                  len(quarantine), {"task": task, "model": model, "status": header.get("status"),
                                    "epochs": (spec.get("config") or {}).get("epochs")})
    if header.get("status") != "success":  # an eval that errored, was cancelled or is still running
        run["status"] = "partial"
    return SessionTables(run, {"scenarios": rows, "verdicts": verdicts, "quarantine": quarantine, **evidence},
                         errors)
