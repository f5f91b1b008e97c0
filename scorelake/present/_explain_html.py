"""One scenario's explanation as an HTML fragment (the viewer's scenario page, the report's
scenario pages): every value from run data escaped."""

from __future__ import annotations

import html
import json

from scorelake.present._explain import Explanation, PlacedCall, indented, mark
from scorelake.transforms.results import Turn


# The explanation's own layout, in every page that shows one (the viewer's scenario page, the report):
# what failed and the transcript first, each in a box of its own height so both fit the first screen.
EXPLAIN_STYLE = """
div.why { border-left: 3px solid #b3261e; padding: .1rem .8rem; margin: .4rem 0 .8rem; }
div.why ul { margin: .2rem 0 .4rem; padding-left: 1.2rem; }
.compared { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: .8rem; }
.compared pre { max-height: 9rem; overflow: auto; }
ol.transcript { max-height: 20rem; overflow: auto; border: 1px solid #dde; padding: .3rem .5rem .3rem 2rem; }
details.task summary pre.opening { color: #555; font-weight: normal; }
"""


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value))


TASK_LINES = 3  # the task's first lines shown before it is opened: its opening, not its boilerplate


def explain_html(e: Explanation) -> str:
    """The explanation as an HTML fragment, the evidence first: the outcome, what failed it with the
    reference beside the prediction, and the transcript (in a box of its own height) come before the
    summary, the task (folded to its first lines), every signal and the judge's exchange. Every
    value from run data escaped."""
    parts = [f'<h1>{esc(e.title)}</h1>',
             f'<p class="outcome {esc(e.outcome.lower())}"><b>{esc(e.outcome)}</b>'
             + (f": failed by {', '.join(f'<code>{esc(f)}</code>' for f in e.failed)}" if e.failed else "") + "</p>"]
    failing = [sig for sig in e.signals if sig.status == "failed"]
    why = "".join(f'<li><code>{esc(sig.signal)}</code>: {esc("; ".join(sig.facts))}</li>' for sig in failing)
    compared = ""
    if e.reference is not None or e.final_answer is not None:
        reference, prediction = e.reference, indented(e.final_answer)
        compared = ('<div class="compared"><div><div class="label">reference (expected)</div>'
                    f'<pre class="reference">{esc("none recorded" if reference is None else reference)}'
                    '</pre></div><div><div class="label">prediction (the agent\'s final answer)</div>'
                    f'<pre class="prediction">{esc("none recorded" if prediction is None else prediction)}'
                    '</pre></div></div>')
    if why or compared:
        parts.append(f'<div class="why">{f"<ul>{why}</ul>" if why else ""}{compared}</div>')
    parts.append(f'<h2>Timeline ({len(e.turns)} turns, {len(e.tool_calls)} tool calls)</h2>'
                 '<ol class="transcript">')
    parts += [_moment_html(moment) for moment in e.timeline]
    parts.append("</ol>")
    parts.append("<ul class=\"summary\">" + "".join(f"<li>{esc(line)}</li>" for line in e.summary) + "</ul>")
    if e.task is not None:  # what the scenario asked: folded to its opening, the rest a click away
        lines = e.task.instructions.splitlines()
        opening = "\n".join(lines[:TASK_LINES]) + ("\n…" if len(lines) > TASK_LINES else "")
        parts.append(f'<details class="task"><summary>The task <span class="note">({esc(e.task.origin)})</span>'
                     f'<pre class="opening">{esc(opening)}</pre></summary>'
                     f'<pre>{esc(e.task.instructions)}</pre></details>')
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


def _moment_html(moment) -> str:
    """A turn, a tool call or what the checks read, as a transcript item."""
    if isinstance(moment, Turn):
        latency = f' <span class="latency">{moment.latency_ms:.0f} ms</span>' if moment.latency_ms is not None else ""
        return (f'<li class="turn {esc(moment.role)}"><b>{esc(moment.role)}</b>{latency}: '
                f'<span class="text">{esc(moment.text)}</span></li>')
    if isinstance(moment, PlacedCall):
        call = moment.call
        where = ' <span class="note">(place unknown)</span>' if moment.unplaced else ""
        returned = (f'<div class="label">returned</div><pre class="result">{esc(call.result)}</pre>'
                    if call.result is not None else "")
        return (f'<li class="call {esc(call.side)}"><b>{esc(call.side)} calls</b> <code>{esc(call.name)}</code>{where}'
                f'<div class="label">arguments</div><pre>{esc(call.arguments_json)}</pre>{returned}</li>')
    return f'<li class="checks"><b>checks</b>: {esc(moment.text)}</li>'
