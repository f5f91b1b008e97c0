"""Why a scenario passed or failed, from its ``Evidence``: each
signal with its verdict and what it rests on, then the conversation and the tool calls. One model,
rendered as text here (``scorelake show``) and as HTML by ``scorelake.present`` (``scorelake view``, the
report's scenario pages)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scorelake.transforms.names import MISSING_VERDICT, RECORDED, SIGNALS
from scorelake.transforms.registry import BY_NAME
from scorelake.transforms.results import (
    Evidence,
    HeardTurns,
    ItemVerdict,
    JudgeInput,
    Judgement,
    ScenarioRow,
    StandingReview,
    Task,
    ToolCall,
    Turn,
)
from scorelake.transforms.voice import words

if TYPE_CHECKING:
    from scorelake.transforms.scoring import Difference


@dataclass
class SignalLine:
    signal: str
    status: str  # passed | failed | not applicable | excluded | not gated (outside the whitelist)
    facts: list[str] = field(default_factory=list)


@dataclass
class ActionItem:
    """ACTION_MATCH (or a tau2 action check) for one reference item: the prediction item (or the
    agent's call) matched to it, or else the closest one, key by key."""

    ordinal: int
    name: str | None
    passed: bool
    note: str  # what it was compared with, in words
    # (key, reference value, prediction value, status: same | missing | differs | extra key (allowed))
    keys: list[tuple[str, str, str, str]] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)  # where, by the comparator's rules, in words


@dataclass(frozen=True)
class PlacedCall:
    """A tool call in the timeline; ``unplaced``: stored without its place (read by an older
    scorelake), so shown after the conversation."""

    call: ToolCall
    unplaced: bool = False


@dataclass(frozen=True)
class Checks:
    """What the checks read once the conversation ended."""

    text: str


Moment = Turn | PlacedCall | Checks


@dataclass
class Explanation:
    title: str
    outcome: str  # PASSED | FAILED | N/A
    failed: list[str]  # the success_breakdown names that failed it (and "stalled")
    summary: list[str]
    signals: list[SignalLine]
    turns: list[Turn]
    tool_calls: list[ToolCall]
    actions: list[ActionItem] = field(default_factory=list)
    # turns and tool calls in the order they happened, then what the checks read
    timeline: list[Moment] = field(default_factory=list)
    final_answer: str | None = None  # the agent's final answer (its prediction): what the judge graded
    judge_input: JudgeInput | None = None  # what the judge was asked
    judge_reply: dict | None = None  # what the judge answered: score, reason and its other keys
    judge_raw_reply: str | None = None  # ... as its model wrote it, before the parse (rejudged judgements)
    task: Task | None = None  # what the scenario asked of the agent
    heard: HeardTurns | None = None  # what the agent heard of each user turn, aligned
    reference: str | None = None  # what the scenario expected (its reference answer), as the judge was shown it


TEXT_SHOWN = 1500  # characters of a long text (the task, the judge's input and raw reply) `show` prints


def mark(passed: Any) -> str:
    """A verdict as the explanation marks it."""
    return "ok  " if passed else "FAIL"


def _short(text: Any, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _item_detail(v: ItemVerdict, limit: int) -> str:
    """What one predicate, assertion or check rests on, in words."""
    if v.kind == "db_state_assertion":
        call = f"({_short(v.arguments_json, limit)})" if v.arguments_json else ""
        said = [f"expected {_short(v.expected_json, limit)}, got {_short(v.actual_json, limit)}"
                if v.expected_json is not None or v.actual_json is not None else ""]
        said += [f"the predicate raised: {_short(v.error, limit)}" if v.error else "",
                 _short(v.detail, limit) if v.detail else ""]
        return call + "".join(f" — {part}" for part in said if part)
    if v.kind == "nl_assertion" and v.detail == MISSING_VERDICT:
        return f" — the judge's reply gave no verdict for assertion {v.ordinal}, so upstream counts it as failed"
    return f" — {_short(v.detail, limit)}" if v.detail else ""


def _items(verdicts: list[ItemVerdict], kind: str, limit: int) -> list[str]:
    return [f"{mark(v.passed)} {v.ordinal}. {_short(v.label or '', limit)}{_item_detail(v, limit)}"
            for v in verdicts if v.kind == kind]


def _facts(signal: str, s: ScenarioRow, verdicts: list[ItemVerdict], judge: Judgement | None,
           items: list[ActionItem], limit: int) -> list[str]:
    """What the verdict of ``signal`` rests on, in words."""
    if signal == "is_action_match":
        actions = [v for v in verdicts if v.kind == "action"]
        facts = [f"{sum(bool(v.passed) for v in actions)} of {len(actions)} reference items matched"] if actions else []
        for item in items:
            if not item.passed:
                facts.append(f"FAIL {item.note}" + "".join(f"; {d}" for d in item.differences[:5])
                             + ("; ..." if len(item.differences) > 5 else ""))
        return facts
    if signal == "db_state_match":
        if s.expected_db_hash is None and s.actual_db_hash is None and s.source != "nemo":
            said = "matched" if s.value(signal) else "did not match"
            return [f"the source's own DB check says the final database {said}"
                    " (tau2 db_check.db_match, tau-bench r_actions: no hashes recorded)"]
        expected, actual = s.expected_db_hash, s.actual_db_hash
        return [f"expected DB hash {expected or '(none: the scenario defines none)'}",
                f"actual DB hash   {actual}" if actual else
                "actual DB hash: none — the run recorded no final database hash (the bot returned none), so "
                "DB_STATE_MATCH is False, as upstream scores it" if expected else "actual DB hash: none"]
    if signal == "judge_passed":
        facts = []
        if s.judge_score is not None:
            threshold = s.judge_threshold
            facts.append(f"score {s.judge_score:g} against threshold "
                         + ("(none)" if threshold is None else f"{threshold:g}"))
        if judge:
            if judge.errored:
                facts.append("the judge itself failed (not the agent): upstream scored it 0.0")
            if judge.judge not in (None, RECORDED):
                facts.append(f"judged by judge '{judge.judge}' (scorelake rejudge), not the run's own")
            facts.append(f"judge's reason: {_short(judge.reason, limit * 3)}")
            extra = json.loads(judge.extra_json or "{}")
            facts += [f"{key}: {_short(json.dumps(value, ensure_ascii=False), limit)}" for key, value in extra.items()]
        return facts
    if signal == "clean_exit":
        return [f"stop reason {s.stop_reason}"]
    declared = BY_NAME.get(signal)
    if declared and declared.items:  # its items' count, then each item's verdict
        passed, total = declared.items
        head = [f"{s.value(passed)} of {s.value(total)} {declared.item_noun} passed"] if s.value(total) else []
        return head + _items(verdicts, signal, limit)
    return []


def _json_text(value: Any, limit: int) -> str:
    return _short(json.dumps(value, ensure_ascii=False), limit)


def _difference_text(d: Difference, limit: int) -> str:
    if d.kind == "missing key":
        return f"{d.path}: missing (expected {_json_text(d.expected, limit)})"
    if d.kind == "no element left":
        return f"{d.path}: no element of the prediction left to match {_json_text(d.expected, limit)}"
    return f"{d.path}: expected {_json_text(d.expected, limit)}, got {_json_text(d.actual, limit)}"


def _key_rows(reference: Any, prediction: Any, found: list[Difference], limit: int) -> list[tuple[str, str, str, str]]:
    """The reference item key by key against the prediction item (a whole value when not a dict)."""
    if not isinstance(reference, dict):
        return [("(item)", _json_text(reference, limit), _json_text(prediction, limit), "differs" if found else "same")]
    prediction = prediction if isinstance(prediction, dict) else {}
    top = {d.path.split(".", 1)[0].split("[", 1)[0]: d.kind for d in found}
    rows = [(key, _json_text(value, limit), "" if key not in prediction else _json_text(prediction[key], limit),
             "missing" if top.get(key) == "missing key" and key not in prediction else
             "differs" if key in top else "same") for key, value in reference.items()]
    rows += [(key, "", _json_text(value, limit), "extra key (allowed)") for key, value in prediction.items()
             if key not in reference]
    return rows


def _action_items(s: ScenarioRow, verdicts: list[ItemVerdict], tool_calls: list[ToolCall],
                  limit: int) -> list[ActionItem]:
    """ACTION_MATCH item by item: the voice-agent runner's reference against the agent's prediction
    (re-compared with the scenario's text flags), or tau2's expected actions against the agent's calls."""
    # the comparator (and the scoring package's imports) only for a page that shows it
    from scorelake.transforms.scoring import ActionMatchUndefined, TextFlags, differences, item_comparisons

    if s.reference_json is not None and s.prediction_json is not None:
        flags = TextFlags(bool(s.ignore_capitalization), bool(s.ignore_punctuation),
                          bool(s.clean_text))
        try:
            compared, extra = item_comparisons(json.loads(s.reference_json), json.loads(s.prediction_json), flags)
        except (ActionMatchUndefined, ValueError):
            return []
        items = []
        for c in compared:
            name = c.reference.get("name") if isinstance(c.reference, dict) else None
            if c.matched:
                note = f"reference item {c.ordinal} matched prediction item {c.prediction_ordinal}"
            elif c.prediction_ordinal is None:
                note = f"reference item {c.ordinal}: the prediction has no item to compare it with"
            else:
                note = (f"reference item {c.ordinal} matched no prediction item; the closest, prediction item "
                        f"{c.prediction_ordinal}, differs")
            items.append(ActionItem(c.ordinal, name, c.matched, note,
                                    _key_rows(c.reference, c.prediction, list(c.differences), limit)
                                    if c.prediction is not None else [],
                                    [_difference_text(d, limit) for d in c.differences]))
        strict = bool(s.strict_match) or bool(s.disallow_extra_items)
        for ordinal, item in extra:
            items.append(ActionItem(len(items) + 1, None, not strict,
                                    f"prediction item {ordinal} matched no reference item"
                                    + (": an extra item, which fails the scenario under strict matching" if strict
                                       else " (extra items are allowed without strict matching)"),
                                    [(key, "", _json_text(value, limit), "extra") for key, value in item.items()]
                                    if isinstance(item, dict) else []))
        return items
    items = []
    for v in (v for v in verdicts if v.kind == "action"):
        expected = json.loads(v.expected_json) if v.expected_json else None
        calls = [c for c in tool_calls if c.name == v.label and c.side == "agent"]
        if v.passed or not calls:
            note = (f"expected call {v.ordinal}, {v.label}: " + ("made as expected" if v.passed else
                    f"the agent never called {v.label}"))
            items.append(ActionItem(v.ordinal, v.label, bool(v.passed), note))
            continue
        arguments = [json.loads(c.arguments_json or "null") for c in calls]
        closest = min(range(len(calls)), key=lambda i: len(differences(expected, arguments[i], TextFlags())))
        found = differences(expected, arguments[closest], TextFlags())
        items.append(ActionItem(v.ordinal, v.label, False,
                                f"expected call {v.ordinal}, {v.label}: none of the agent's {len(calls)} calls "
                                f"of it had these arguments; the closest, call #{calls[closest].ordinal}, differs",
                                _key_rows(expected, arguments[closest], found, limit),
                                [_difference_text(d, limit) for d in found]))
    return items


def _timeline(turns: list[Turn], calls: list[ToolCall], checks: list[str]) -> list[Moment]:
    """Turns and tool calls in the order they happened: a call goes right after the turn of the
    other party it answers (its ``replies_to_turn``-th: the user's for the agent's calls, the
    agent's for a simulated user's), before the answer; calls stored without that place (read by an
    older scorelake) after the conversation; then what the checks read."""
    placed: dict[int, list[Moment]] = {}
    unplaced: list[Moment] = []
    positions = {"agent": [i for i, t in enumerate(turns) if t.role == "user"],
                 "user": [i for i, t in enumerate(turns) if t.role != "user"]}
    for call in calls:
        k = call.replies_to_turn
        if k is None:
            unplaced.append(PlacedCall(call, unplaced=True))
            continue
        heard = positions["user" if call.side == "user" else "agent"]
        where = -1 if k == 0 else heard[k - 1] if k <= len(heard) else len(turns) - 1
        placed.setdefault(where, []).append(PlacedCall(call))
    timeline = list(placed.get(-1, []))
    for i, turn in enumerate(turns):
        timeline += [turn, *placed.get(i, [])]
    return timeline + unplaced + [Checks(text) for text in checks]


def _checks(s: ScenarioRow, judge: Judgement | None) -> list[str]:
    """Where the checks looked, once the conversation ended."""
    said = []
    if judge is not None:
        said.append("the judge read the conversation and the agent's final response: score "
                    + ("(none)" if judge.score is None else f"{judge.score:g}")
                    + (" (the judge itself failed)" if judge.errored else ""))
    if s.expected_db_hash is not None or s.value("dbsa_total"):
        said.append("DB_STATE_MATCH and the DB predicates read the final database")
    if s.value("is_action_match") is not None and s.reference_json is not None:
        said.append("ACTION_MATCH read the agent's final response (its prediction) against the reference")
    return said


def _review_facts(signal: str, s: ScenarioRow, reviews: list[StandingReview], limit: int) -> list[str]:
    """The standing reviews of ``signal`` (and of its items), in words: under a policy that takes
    reviews, what it was and what the reviewer made it ("failed → passed by alice: ...")."""
    takes = s.unreviewed is not None
    before = dict(entry.split("=", 1) for entry in (s.unreviewed or "").split(";") if entry)
    facts = []
    for r in reviews:
        if r.signal != signal:
            continue
        after = "passed" if r.verdict == "pass" else "failed"
        item = f"{'NL assertion' if signal == 'nl_assertion' else 'DB predicate'} {r.assertion}: " \
            if r.assertion is not None else ""
        note = f": {_short(r.note, limit)}" if r.note else ""
        if r.verdict == "undecided":
            facts.append(f"{item}undecided ({r.reviewer}): no review stands under the policy's rule")
        elif takes and r.assertion is None and signal in before:
            facts.append(f"{before[signal]} → {after} by {r.reviewer}{note}")
        elif takes:
            facts.append(f"{item}{after} by {r.reviewer}{note}")
        else:
            facts.append(f"{item}reviewed {after} by {r.reviewer}{note} (counted under a policy that takes "
                         "reviews)")
    return facts


def explain(evidence: Evidence, limit: int = 240) -> Explanation:
    """The explanation of one scenario's verdict (texts in facts shortened to ``limit`` characters;
    the transcript and tool calls are kept whole)."""
    s, verdicts, judge, reviews = evidence.scenario, evidence.verdicts, evidence.judge, evidence.reviews
    buckets = {name: status for status, key in (("passed", "passed"), ("failed", "failed"),
                                                 ("not applicable", "not_applicable"), ("excluded", "excluded"))
               for name in getattr(s, key) or []}
    reviewed = {r.signal for r in reviews}
    turns, tool_calls = evidence.turns, evidence.tool_calls
    items = _action_items(s, verdicts, tool_calls, limit)
    signals = [SignalLine(name, buckets.get(name, "not gated"),
                          _facts(name, s, verdicts, judge, items, limit) + _review_facts(name, s, reviews, limit))
               for name in SIGNALS if name in buckets or s.value(BY_NAME[name].value) is not None or name in reviewed]
    outcome = {True: "PASSED", False: "FAILED"}.get(s.is_successful, "N/A")
    failed = list(s.failed or []) + (["stalled"] if s.stalled else [])
    summary = [f"domain {s.domain}; stop reason {s.stop_reason}; {s.total_turns} turns; "
               f"agent turns {s.agent_turns} (min-agent-turns {s.min_agent_turns})"]
    if s.stalled:
        summary.append(f"stalled: the agent made {s.agent_turns} turns, fewer than min-agent-turns "
                       f"{s.min_agent_turns}, so the scenario counts as failed and leaves every per-signal rate")
    summary.append(f"whitelist: {', '.join(s.success_signals or []) or '(none)'}")
    summary += [f"outcome reviewed: {fact}" for fact in _review_facts("is_successful", s, reviews, limit)]
    final = _final_answer(s, turns)
    if final is not None:
        summary.append(f"the agent's final answer: {_short(final, limit)}")
    reply = None if judge is None else {"score": judge.score, "reason": judge.reason,
                                        **json.loads(judge.extra_json or "{}")}
    return Explanation(f"{evidence.run} / {s.scenario_name} (policy {evidence.policy})", outcome, failed,
                       summary, signals, turns, tool_calls, items, _timeline(turns, tool_calls, _checks(s, judge)),
                       final, evidence.judge_input, reply, judge and judge.reply, evidence.task, evidence.heard,
                       indented(s.reference_json))


def indented(text: str | None) -> str | None:
    """A reference or an answer as upstream's judge is shown it: JSON indented two, a JSON string or
    text that is no JSON as it is."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _final_answer(s: ScenarioRow, turns: list[Turn]) -> str | None:
    """The agent's final answer: its prediction (final_agent_response.json), else its last turn."""
    answer = json.loads(s.prediction_json) if s.prediction_json is not None else None
    if answer is not None:
        return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    said = [t.text for t in turns if t.role != "user" and t.text]
    return said[-1] if said else None


def _heard_heading(heard: HeardTurns) -> str:
    counts = [f"{n} {what}" for n, what in ((heard.user_to_agent_turns_missing, "never heard"),
                                            (heard.user_to_agent_turns_undelivered, "not delivered before the hang-up"),
                                            (heard.user_to_agent_turns_duplicated, "heard twice"),
                                            (heard.user_to_agent_turns_extra, "heard, never said")) if n]
    wer = "" if heard.user_to_agent_wer is None else f"; WER {heard.user_to_agent_wer * 100:.1f}% of the turns heard"
    return (f"what the agent heard of each user turn (= as said, ~ otherwise, - never heard, + never said"
            f"{'; ' + ', '.join(counts) if counts else ''}{wer})")


def explain_text(e: Explanation, width: int = 100) -> str:
    """The explanation as plain text, ``width`` columns wide."""
    def wrap(text: str, indent: str = "", first: str = "") -> list[str]:
        """``text`` in lines of ``width``, its own line breaks kept, every line after the first indented."""
        lines: list[str] = []
        for part in text.split("\n"):
            lines += textwrap.wrap(part, width, initial_indent=first if not lines else indent,
                                   subsequent_indent=indent, break_long_words=True) or [first if not lines else indent]
        return lines

    lines = [*wrap(e.title), *wrap(f"{e.outcome}" + (f": failed by {', '.join(e.failed)}" if e.failed else ""))]
    for line in e.summary:
        lines += wrap(line, "  ", "  ")
    def long_text(heading: str, text: str) -> list[str]:
        """``text`` under ``heading``, cut at ``TEXT_SHOWN`` characters (the heading then says so)."""
        cut = f" (the first {TEXT_SHOWN} characters; --format json for all)" if len(text) > TEXT_SHOWN else ""
        return ["", *wrap(heading + cut), *wrap(_short(text, TEXT_SHOWN), "  ", "  ")]

    if e.task is not None:
        lines += long_text(f"the task ({e.task.origin})", e.task.instructions)
    lines += ["", "signals"]
    for sig in e.signals:
        lines += wrap(f"{sig.signal}: {sig.status}", "    ", "  ")
        for fact in sig.facts:
            lines += wrap(fact, "      ", "    ")
    if e.actions:
        lines += ["", "ACTION_MATCH item by item (reference against prediction)"]
        for item in e.actions:
            lines += wrap(f"{mark(item.passed)} {item.note}", "      ", "  ")
            for key, expected, actual, status in item.keys:
                if status != "same":
                    lines += wrap(f"{key}: {status}; reference {expected or '-'}; prediction {actual or '-'}",
                                  "        ", "      ")
            for difference in item.differences:
                if "." in difference.split(":", 1)[0] or "[" in difference.split(":", 1)[0]:  # nested: the path
                    lines += wrap(difference, "        ", "      ")
    lines += ["", f"timeline ({len(e.turns)} turns, {len(e.tool_calls)} tool calls, in order)"]
    for moment in e.timeline:
        if isinstance(moment, Turn):
            latency = f" ({moment.latency_ms:.0f} ms)" if moment.latency_ms is not None else ""
            lines += wrap(f"{moment.role}{latency}: {moment.text or ''}", "      ", "  ")
        elif isinstance(moment, PlacedCall):
            call = moment.call
            where = " (place unknown: ingested by an older scorelake)" if moment.unplaced else ""
            lines += wrap(f"[{call.side} calls {call.name}]{where} arguments: {call.arguments_json}", "      ", "    ")
            if call.result is not None:
                lines += wrap(f"returned: {call.result}", "      ", "      ")
        else:
            lines += wrap(f"[checks] {moment.text}", "      ", "  ")
    if e.heard is not None:
        lines += ["", *wrap(_heard_heading(e.heard))]
        for said, heard in e.heard.pairs:
            if said is None:
                lines += wrap(f"+ heard, never said: {heard}", "    ", "  ")
            elif heard is None:
                lines += wrap(f"- said, never heard: {said}", "    ", "  ")
            elif words(said) == words(heard):
                lines += wrap(f"= {said}", "    ", "  ")
            else:
                lines += wrap(f"~ said:  {said}", "          ", "  ") + wrap(f"heard: {heard}", "          ", "    ")
    if e.judge_reply is not None:
        lines += ["", "the judge's reply"]
        lines += wrap(json.dumps(e.judge_reply, ensure_ascii=False), "  ", "  ")
    if e.judge_raw_reply is not None:
        lines += long_text("the judge's reply as its model wrote it", e.judge_raw_reply)
    if e.judge_input is not None and e.judge_input.user_content:
        lines += ["", *wrap(f"what the judge was asked (its user content, the first {TEXT_SHOWN} "
                            "characters; --format json for all, with the system prompt)")]
        lines += wrap(_short(e.judge_input.user_content, TEXT_SHOWN), "  ", "  ")
    return "\n".join(line.rstrip() for line in lines) + "\n"
