"""Why a scenario passed or failed, from its ``Evidence``: each
signal with its verdict and what it rests on, then the conversation and the tool calls. One model,
rendered as text (``scorelake show``) and as HTML (``scorelake view``, the report's scenario pages)."""

from __future__ import annotations

import html
import json
import textwrap
from dataclasses import dataclass, field
from typing import Any

from scorelake.transforms.names import RECORDED, SIGNALS
from scorelake.transforms.results import Evidence


@dataclass
class SignalLine:
    signal: str
    status: str  # passed | failed | not applicable | excluded | not gated (outside the whitelist)
    facts: list[str] = field(default_factory=list)


@dataclass
class Explanation:
    title: str
    outcome: str  # PASSED | FAILED | N/A
    failed: list[str]  # the success_breakdown names that failed it (and "stalled")
    summary: list[str]
    signals: list[SignalLine]
    turns: list[dict]
    tool_calls: list[dict]


def _mark(passed: Any) -> str:
    return "ok  " if passed else "FAIL"


def _short(text: Any, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _items(verdicts: list[dict], kind: str, limit: int) -> list[str]:
    return [f"{_mark(v['passed'])} {v['ordinal']}. {_short(v['label'] or '', limit)}"
            + (f" — {_short(v['detail'], limit)}" if v.get("detail") else "")
            for v in verdicts if v["kind"] == kind]


def _facts(signal: str, s: dict, verdicts: list[dict], judge: dict | None, limit: int) -> list[str]:
    """What the verdict of ``signal`` rests on, in words."""
    if signal == "is_action_match":
        actions = [v for v in verdicts if v["kind"] == "action"]
        facts = [f"{sum(v['passed'] for v in actions)} of {len(actions)} reference items matched"] if actions else []
        facts += [f"FAIL reference item {v['ordinal']} found no match: {_short(v['expected_json'], limit)}"
                  for v in actions if not v["passed"]]
        if any(not v["passed"] for v in actions) and s.get("prediction_json"):
            facts.append(f"prediction: {_short(s['prediction_json'], limit)}")
        return facts
    if signal == "db_state_match":
        if s.get("expected_db_hash") is None and s.get("actual_db_hash") is None and s.get("source") != "nemo":
            return [f"the source's own DB check says the final database {'matched' if s.get(signal) else 'did not match'}"
                    " (tau2 db_check.db_match, tau-bench r_actions: no hashes recorded)"]
        return [f"expected DB hash {s.get('expected_db_hash') or '(none)'}",
                f"actual DB hash   {s.get('actual_db_hash') or '(none)'}"]
    if signal == "db_state_assertion":
        head = [f"{s['dbsa_passed']} of {s['dbsa_total']} predicates passed"] if s.get("dbsa_total") else []
        return head + _items(verdicts, "db_state_assertion", limit)
    if signal == "nl_assertion":
        head = [f"{s['nl_passed']} of {s['nl_total']} assertions passed"] if s.get("nl_total") else []
        return head + _items(verdicts, "nl_assertion", limit)
    if signal == "judge_passed":
        facts = []
        if s.get("judge_score") is not None:
            threshold = s.get("judge_threshold")
            facts.append(f"score {s['judge_score']:g} against threshold "
                         + ("(none)" if threshold is None else f"{threshold:g}"))
        if judge:
            if judge.get("errored"):
                facts.append("the judge itself failed (not the agent): upstream scored it 0.0")
            if judge.get("judge") not in (None, RECORDED):
                facts.append(f"judged by judge '{judge['judge']}' (scorelake rejudge), not the run's own")
            facts.append(f"judge's reason: {_short(judge.get('reason'), limit * 3)}")
            extra = json.loads(judge.get("extra_json") or "{}")
            facts += [f"{key}: {_short(json.dumps(value, ensure_ascii=False), limit)}" for key, value in extra.items()]
        return facts
    if signal == "clean_exit":
        return [f"stop reason {s.get('stop_reason')}"]
    if signal == "communicate":
        head = [f"{s['communicate_passed']} of {s['communicate_total']} checks met"] if s.get("communicate_total") else []
        return head + _items(verdicts, "communicate", limit)
    return []


def _review_facts(signal: str, s: dict, reviews: list[dict], limit: int) -> list[str]:
    """The standing reviews of ``signal`` (and of its items), in words: under a policy that takes
    reviews, what it was and what the reviewer made it ("failed → passed by alice: ...")."""
    takes = s.get("unreviewed") is not None
    before = dict(entry.split("=", 1) for entry in (s.get("unreviewed") or "").split(";") if entry)
    facts = []
    for r in reviews:
        if r["signal"] != signal:
            continue
        after = "passed" if r["verdict"] == "pass" else "failed"
        item = f"{'NL assertion' if signal == 'nl_assertion' else 'DB predicate'} {r['assertion']}: " \
            if r["assertion"] is not None else ""
        note = f": {_short(r['note'], limit)}" if r.get("note") else ""
        if takes and r["assertion"] is None and signal in before:
            facts.append(f"{before[signal]} → {after} by {r['reviewer']}{note}")
        elif takes:
            facts.append(f"{item}{after} by {r['reviewer']}{note}")
        else:
            facts.append(f"{item}reviewed {after} by {r['reviewer']}{note} (counted under a policy that takes "
                         "reviews)")
    return facts


def explain(evidence: Evidence, limit: int = 240) -> Explanation:
    """The explanation of one scenario's verdict (texts in facts shortened to ``limit`` characters;
    the transcript and tool calls are kept whole)."""
    s, verdicts, judge = evidence.scenario, evidence.verdicts.to_dicts(), evidence.judge
    buckets = {name: status for status, key in (("passed", "passed"), ("failed", "failed"),
                                                 ("not applicable", "not_applicable"), ("excluded", "excluded"))
               for name in s.get(key) or []}
    reviews = evidence.reviews.to_dicts()
    reviewed = {r["signal"] for r in reviews}
    signals = [SignalLine(name, buckets.get(name, "not gated"),
                          _facts(name, s, verdicts, judge, limit) + _review_facts(name, s, reviews, limit))
               for name in SIGNALS if name in buckets or s.get(name) is not None or name in reviewed
               or (name in ("db_state_assertion", "nl_assertion") and s.get(f"{name}_pass_rate") is not None)]
    outcome = {True: "PASSED", False: "FAILED"}.get(s.get("is_successful"), "N/A")
    failed = list(s.get("failed") or []) + (["stalled"] if s.get("stalled") else [])
    summary = [f"domain {s['domain']}; stop reason {s.get('stop_reason')}; {s.get('total_turns')} turns; "
               f"agent turns {s.get('agent_turns')} (min-agent-turns {s.get('min_agent_turns')})"]
    if s.get("stalled"):
        summary.append(f"stalled: the agent made {s.get('agent_turns')} turns, fewer than min-agent-turns "
                       f"{s.get('min_agent_turns')}, so the scenario counts as failed and leaves every per-signal rate")
    summary.append(f"whitelist: {', '.join(s.get('success_signals') or []) or '(none)'}")
    summary += [f"outcome reviewed: {fact}" for fact in _review_facts("is_successful", s, reviews, limit)]
    return Explanation(f"{evidence.run} / {s['scenario_name']} (policy {evidence.policy})", outcome, failed,
                       summary, signals, evidence.turns.to_dicts(), evidence.tool_calls.to_dicts())


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
    lines += ["", "signals"]
    for sig in e.signals:
        lines += wrap(f"{sig.signal}: {sig.status}", "    ", "  ")
        for fact in sig.facts:
            lines += wrap(fact, "      ", "    ")
    lines += ["", f"transcript ({len(e.turns)} turns)"]
    for t in e.turns:
        latency = f" ({t['latency_ms']:.0f} ms)" if t.get("latency_ms") is not None else ""
        lines += wrap(f"{t['role']}{latency}: {t['text'] or ''}", "      ", "  ")
    if e.tool_calls:
        lines += ["", f"tool calls ({len(e.tool_calls)})"]
        for c in e.tool_calls:
            lines += wrap(f"{c['side']} #{c['ordinal']} {c['name']}({c['arguments_json']})", "      ", "  ")
            if c.get("result") is not None:
                lines += wrap(f"-> {c['result']}", "        ", "      ")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def explain_html(e: Explanation) -> str:
    """The explanation as an HTML fragment; every value from run data escaped."""
    esc = lambda value: html.escape("" if value is None else str(value))  # noqa: E731
    parts = [f'<h1>{esc(e.title)}</h1>',
             f'<p class="outcome {esc(e.outcome.lower())}"><b>{esc(e.outcome)}</b>'
             + (f": failed by {', '.join(f'<code>{esc(f)}</code>' for f in e.failed)}" if e.failed else "") + "</p>",
             "<ul class=\"summary\">" + "".join(f"<li>{esc(line)}</li>" for line in e.summary) + "</ul>",
             '<h2>Signals</h2><table class="signals"><tr><th>signal</th><th>verdict</th><th>evidence</th></tr>']
    for sig in e.signals:
        facts = "".join(f"<li>{esc(f)}</li>" for f in sig.facts)
        parts.append(f'<tr class="{esc(sig.status.replace(" ", "-"))}"><td><code>{esc(sig.signal)}</code></td>'
                     f"<td>{esc(sig.status)}</td><td><ul>{facts}</ul></td></tr>")
    parts.append("</table>")
    parts.append(f'<h2>Transcript ({len(e.turns)} turns)</h2><ol class="transcript">')
    for t in e.turns:
        latency = f' <span class="latency">{t["latency_ms"]:.0f} ms</span>' if t.get("latency_ms") is not None else ""
        parts.append(f'<li class="turn {esc(t["role"])}"><b>{esc(t["role"])}</b>{latency}: '
                     f'<span class="text">{esc(t["text"])}</span></li>')
    parts.append("</ol>")
    if e.tool_calls:
        parts.append(f'<h2>Tool calls ({len(e.tool_calls)})</h2><ol class="tool-calls">')
        for c in e.tool_calls:
            parts.append(f"<li><b>{esc(c['side'])}</b> <code>{esc(c['name'])}</code> "
                         f"<pre>{esc(c['arguments_json'])}</pre>"
                         + (f"<pre class=\"result\">{esc(c['result'])}</pre>" if c.get("result") is not None else "")
                         + "</li>")
        parts.append("</ol>")
    return "\n".join(parts)
