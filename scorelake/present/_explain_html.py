"""One scenario's explanation as an HTML fragment (the viewer's scenario page, the report's
scenario pages): every value from run data escaped."""

from __future__ import annotations

import html
import json

from scorelake.present._explain import Explanation, PlacedCall, mark
from scorelake.transforms.results import Turn


def explain_html(e: Explanation) -> str:
    """The explanation as an HTML fragment; every value from run data escaped."""
    esc = lambda value: html.escape("" if value is None else str(value))  # noqa: E731
    parts = [f'<h1>{esc(e.title)}</h1>',
             f'<p class="outcome {esc(e.outcome.lower())}"><b>{esc(e.outcome)}</b>'
             + (f": failed by {', '.join(f'<code>{esc(f)}</code>' for f in e.failed)}" if e.failed else "") + "</p>",
             "<ul class=\"summary\">" + "".join(f"<li>{esc(line)}</li>" for line in e.summary) + "</ul>"]
    if e.task is not None:  # what the scenario asked: the measure of what the agent did
        parts.append(f'<details class="task" open><summary>The task <span class="note">({esc(e.task.origin)})</span>'
                     f'</summary><pre>{esc(e.task.instructions)}</pre></details>')
    parts.append('<h2>Signals</h2><table class="signals"><tr><th>signal</th><th>verdict</th><th>evidence</th></tr>')
    for sig in e.signals:
        facts = "".join(f"<li>{esc(f)}</li>" for f in sig.facts)
        parts.append(f'<tr class="{esc(sig.status.replace(" ", "-"))}"><td><code>{esc(sig.signal)}</code></td>'
                     f"<td>{esc(sig.status)}</td><td><ul>{facts}</ul></td></tr>")
    parts.append("</table>")
    if e.actions:
        parts.append('<h2>ACTION_MATCH item by item</h2><div class="actions">')
        for item in e.actions:
            rows = "".join(f'<tr class="{esc(status.split(" ")[0])}"><td><code>{esc(key)}</code></td><td><pre>{esc(expected)}'
                           f"</pre></td><td><pre>{esc(actual)}</pre></td><td>{esc(status)}</td></tr>"
                           for key, expected, actual, status in item.keys)
            nested = "".join(f"<li>{esc(d)}</li>" for d in item.differences)
            parts.append(f'<div class="action {"passed" if item.passed else "failed"}"><p><b>{esc(mark(item.passed))}'
                         f"</b> {esc(item.note)}</p>"
                         + (f'<table class="action-keys"><tr><th>key</th><th>reference</th><th>prediction</th>'
                            f"<th></th></tr>{rows}</table>" if rows else "")
                         + (f'<ul class="differences">{nested}</ul>' if nested else "") + "</div>")
        parts.append("</div>")
    parts.append(f'<h2>Timeline ({len(e.turns)} turns, {len(e.tool_calls)} tool calls)</h2><ol class="transcript">')
    for moment in e.timeline:
        if isinstance(moment, Turn):
            latency = (f' <span class="latency">{moment.latency_ms:.0f} ms</span>'
                       if moment.latency_ms is not None else "")
            parts.append(f'<li class="turn {esc(moment.role)}"><b>{esc(moment.role)}</b>{latency}: '
                         f'<span class="text">{esc(moment.text)}</span></li>')
        elif isinstance(moment, PlacedCall):
            call = moment.call
            where = ' <span class="note">(place unknown)</span>' if moment.unplaced else ""
            returned = (f'<div class="label">returned</div><pre class="result">{esc(call.result)}</pre>'
                        if call.result is not None else "")
            parts.append(f'<li class="call {esc(call.side)}"><b>{esc(call.side)} calls</b> '
                         f'<code>{esc(call.name)}</code>{where}<div class="label">arguments</div>'
                         f'<pre>{esc(call.arguments_json)}</pre>{returned}</li>')
        else:
            parts.append(f'<li class="checks"><b>checks</b>: {esc(moment.text)}</li>')
    parts.append("</ol>")
    if e.judge_reply is not None:
        reply = json.dumps(e.judge_reply, ensure_ascii=False, indent=2)
        raw = (f'<div class="label">as its model wrote it</div><pre>{esc(e.judge_raw_reply)}</pre>'
               if e.judge_raw_reply is not None else "")
        parts.append(f'<details class="judge-reply"><summary>The judge\'s reply</summary><pre>{esc(reply)}</pre>'
                     f"{raw}</details>")
    if e.judge_input is not None:
        asked = e.judge_input
        parts.append('<details class="judge-input"><summary>What the judge was asked</summary>'
                     f'<div class="label">system prompt</div><pre>{esc(asked.system_prompt)}</pre>'
                     f'<div class="label">user content</div><pre>{esc(asked.user_content)}</pre></details>')
    return "\n".join(parts)
