"""A self-contained HTML report: rates across runs as charts, latest run against the previous one,
stalled scenarios. One file, no external resources: the data is embedded as JSON and drawn as SVG
by a few lines of vanilla JavaScript when the page opens."""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import polars as pl

from scorelake.present._explain_html import EXPLAIN_STYLE, explain_html
from scorelake.present._gate import delta_text, mcnemar_text, not_compared
from scorelake.present._glossary import titled_headings
from scorelake.present._headline import headline_facts
from scorelake.present._panels import CAUSE_DOCS, DASH, LATENCY_PANEL, VOICE_PANEL, shown
from scorelake.transforms.analysis import Comparison
from scorelake.transforms.results import Headline

# JSON that is inert inside <script>: no "</script", "<!--" or "]]>" can form, and U+2028/9 (line
# ends to older JavaScript) are escaped too. JSON.parse reads the escapes back as the characters.
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                              "\u2029": "\\u2029"})


def _json(data: Any) -> str:
    return json.dumps(data, default=str).translate(_SCRIPT_SAFE)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _delta_row(r: dict[str, Any]) -> str:
    delta = r["delta"]
    trend = "" if not delta else "up" if delta > 0 else "down"
    shown, interval = delta_text(r, "–")
    detectable = "–" if r["min_detectable"] is None else f"{r['min_detectable'] * 100:.1f} pts"
    return (f"<tr><td>{html.escape(r['domain'])}</td><td>{_pct(r['rate_a'])}</td><td>{_pct(r['rate_b'])}</td>"
            f"<td class='{trend}'>{shown}</td><td>{interval}</td><td class='label {html.escape(r['label'] or '')}'>"
            f"{html.escape(r['label'] or '–')}</td><td>{detectable}</td></tr>")


def anchor(run: str, scenario: str) -> str:
    """The id of a scenario's section in the report: any name, made a safe id."""
    return "s-" + hashlib.sha1(f"{run}\0{scenario}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _scenario_link(run: str, scenario: str, pages: dict) -> str:
    name = html.escape(scenario)
    return f"<a href='#{anchor(run, scenario)}'>{name}</a>" if (run, scenario) in pages else name


def _not_compared_html(c: Comparison) -> str:
    """What the comparison left out, and why: scenarios only one run has, changed definitions, and a
    judge or flags that scored the runs differently."""
    apart = [f"<li>{words} ({len(names)}): {', '.join(html.escape(n) for n in names)}</li>"
             for words, names in not_compared(c, "the previous run", "the latest run")]
    apart += [f"<li>scored differently: {html.escape(change)}</li>" for change in c.lineage_changes]
    listed = "".join(apart)
    return f"<h3>Not compared</h3><ul id='apart'>{listed}</ul>" if listed else ""


def _comparison_html(c: Comparison | None, pages: dict) -> str:
    if c is None:
        return "<p class='note'>Only one run in the warehouse: nothing to compare yet.</p>"
    rows = "".join(_delta_row(r) for r in c.deltas.iter_rows(named=True))
    flips = lambda names: ", ".join(_scenario_link(c.run_b, n, pages) for n in names) or "none"  # noqa: E731
    return (
        f"<p>Previous <b>{html.escape(c.run_a)}</b> → latest <b>{html.escape(c.run_b)}</b>, like with like: the "
        f"{c.paired} scenarios both ran with the same definition, paired. A domain is <i>regressed</i> or "
        f"<i>improved</i> only when the exact McNemar test on its pairs says so at alpha {c.alpha:g}; "
        "<i>detectable</i> is the smallest difference its pairs would find (power 0.8).</p>"
        "<table id='deltas'><thead><tr><th>domain</th><th>previous</th><th>latest</th><th>delta</th>"
        f"<th>95% interval</th><th>change</th><th>detectable</th></tr></thead><tbody>{rows}</tbody></table>"
        f"<p id='fixed'>Fixed ({len(c.fixed)}): {flips(c.fixed)}</p>"
        f"<p id='broken'>Broken ({len(c.broken)}): {flips(c.broken)}</p>"
        f"<p id='mcnemar'>Exact {html.escape(mcnemar_text(c))}</p>{_not_compared_html(c)}"
    )


def _stalled_html(stalled: pl.DataFrame, pages: dict) -> str:
    if stalled.is_empty():
        return "<p class='note'>No stalled scenarios.</p>"
    rows = "".join(
        f"<tr><td>{html.escape(r['run_id'])}</td><td>{_scenario_link(r['run_id'], r['scenario_name'], pages)}</td>"
        f"<td>{r['agent_turns']}</td><td>{r['min_agent_turns']}</td></tr>"
        for r in stalled.iter_rows(named=True))
    return ("<table id='stalled'><thead><tr><th>run</th><th>scenario</th><th>agent turns</th><th>minimum</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>")


_SCRIPT = """
const {runs, rows: data} = JSON.parse(document.getElementById('history-data').textContent);
const order = new Map(runs.map((run, i) => [run, i]));
const NS = 'http://www.w3.org/2000/svg';
const el = (tag, attrs, text) => {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
};
// A chart's frame: a figure captioned with its domain, in ``container``.
const figureFor = (container, domain) => {
  const figure = document.createElement('figure');
  figure.className = 'chart';
  figure.dataset.domain = domain;
  const caption = document.createElement('figcaption');
  caption.textContent = domain;
  figure.appendChild(caption);
  container.appendChild(figure);
  return figure;
};
const charts = document.getElementById('charts');
const domains = [...new Set(data.map(r => r.domain))].sort();
for (const domain of domains) {
  const rows = data.filter(r => r.domain === domain && r.success_rate !== null)
                   .sort((a, b) => order.get(a.run_id) - order.get(b.run_id));
  const figure = figureFor(charts, domain);
  const w = 60 + rows.length * 48, h = 180, base = 150, scale = 120;
  const svg = el('svg', {width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img'});
  svg.appendChild(el('line', {x1: 40, y1: base, x2: w - 10, y2: base, class: 'axis'}));
  svg.appendChild(el('text', {x: 4, y: base - scale + 4, class: 'tick'}, '100%'));
  svg.appendChild(el('text', {x: 10, y: base + 4, class: 'tick'}, '0%'));
  rows.forEach((r, i) => {
    const x = 50 + i * 48, bar = r.success_rate * scale;
    const rect = el('rect', {x, y: base - bar, width: 30, height: bar, class: 'bar',
                             'data-run': r.run_id, 'data-rate': r.success_rate});
    rect.appendChild(el('title', {}, `${r.run_id}: ${(r.success_rate * 100).toFixed(1)}% ` +
                                     `(${r.success_passed}/${r.success_total})` +
                                     (r.change ? `; ${r.change} (${r.broken} broken, ${r.fixed} fixed)` : '')));
    svg.appendChild(rect);
    if (r.success_ci_low !== null) {
      svg.appendChild(el('line', {x1: x + 15, x2: x + 15, y1: base - r.success_ci_high * scale,
                                  y2: base - r.success_ci_low * scale, class: 'ci'}));
    }
    const mark = {regressed: ' ▼', improved: ' ▲'}[r.change] || '';
    svg.appendChild(el('text', {x: x + 15, y: base - bar - 4, class: `value ${mark ? r.change : ''}`,
                                'text-anchor': 'middle'}, `${(r.success_rate * 100).toFixed(0)}%${mark}`));
    svg.appendChild(el('text', {x: x + 15, y: base + 14, class: 'tick', 'text-anchor': 'middle'},
                       `#${order.get(r.run_id) + 1}`));
  });
  figure.appendChild(svg);
}
document.body.dataset.rendered = domains.length;

// Response latency per domain across runs: a box per run (p25-p75, the median across it), whiskers
// from p5 to p95, a dot at the slowest exchange (at the top edge, hollow, when off the scale).
const latency = JSON.parse(document.getElementById('latency-data').textContent);
const boxes = document.getElementById('latency-charts');
for (const domain of [...new Set(latency.map(r => r.domain))].sort()) {
  const rows = latency.filter(r => r.domain === domain).sort((a, b) => order.get(a.run_id) - order.get(b.run_id));
  const figure = figureFor(boxes, domain);
  const top = Math.max(...rows.map(r => r.p95_ms)) * 1.15 || 1;
  const w = 70 + rows.length * 48, h = 180, base = 150, scale = 130;
  const y = ms => base - Math.min(ms, top) / top * scale;
  const svg = el('svg', {width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img'});
  svg.appendChild(el('line', {x1: 50, y1: base, x2: w - 10, y2: base, class: 'axis'}));
  svg.appendChild(el('text', {x: 2, y: base - scale + 4, class: 'tick'}, `${Math.round(top)} ms`));
  svg.appendChild(el('text', {x: 30, y: base + 4, class: 'tick'}, '0'));
  rows.forEach((r, i) => {
    const x = 60 + i * 48, mid = x + 15;
    const g = el('g', {class: 'box', 'data-run': r.run_id, 'data-p50': r.p50_ms, 'data-p95': r.p95_ms});
    g.appendChild(el('title', {}, `${r.run_id}: ${r.exchanges} exchanges, p5 ${Math.round(r.p05_ms)}, ` +
      `p25 ${Math.round(r.p25_ms)}, p50 ${Math.round(r.p50_ms)}, p75 ${Math.round(r.p75_ms)}, ` +
      `p95 ${Math.round(r.p95_ms)}, max ${Math.round(r.max_ms)} ms`));
    g.appendChild(el('line', {x1: mid, x2: mid, y1: y(r.p95_ms), y2: y(r.p05_ms), class: 'ci'}));
    g.appendChild(el('rect', {x, y: y(r.p75_ms), width: 30, height: Math.max(y(r.p25_ms) - y(r.p75_ms), 1),
                              class: 'bar'}));
    g.appendChild(el('line', {x1: x, x2: x + 30, y1: y(r.p50_ms), y2: y(r.p50_ms), class: 'median'}));
    g.appendChild(el('circle', {cx: mid, cy: y(r.max_ms), r: 2.5,
                                class: r.max_ms > top ? 'outlier off-scale' : 'outlier'}));
    svg.appendChild(g);
    svg.appendChild(el('text', {x: mid, y: base + 14, class: 'tick', 'text-anchor': 'middle'},
                       `#${order.get(r.run_id) + 1}`));
  });
  figure.appendChild(svg);
}
document.body.dataset.latencyRendered = boxes ? boxes.children.length : 0;
"""

_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: left; }
.chart { display: inline-block; margin: 0 1em 1em 0; } figcaption { font-weight: 600; }
.bar { fill: #4a7bd0; } .median { stroke: #fff; stroke-width: 2; } .outlier { fill: #222; }
.outlier.off-scale { fill: none; stroke: #222; } .ci { stroke: #222; stroke-width: 1.5; } .axis { stroke: #999; }
.tick, .value { font-size: 10px; fill: #555; } .up { color: #17803d; } .down { color: #b3261e; }
.label.regressed { color: #b3261e; font-weight: 600; } .label.improved { color: #17803d; font-weight: 600; }
.value.regressed { fill: #b3261e; font-weight: 600; } .value.improved { fill: #17803d; font-weight: 600; }
.note { color: #666; }
section.scenario { border-top: 2px solid #ccc; margin-top: 2em; } section.scenario h1 { font-size: 1.2em; }
.outcome.failed b, tr.failed td:nth-child(2) { color: #b3261e; } .outcome.passed b, tr.passed td:nth-child(2) { color: #17803d; }
section.scenario pre { white-space: pre-wrap; word-break: break-word; background: #f6f7f9; padding: .3em; }
li.call { list-style: "⚙ "; background: #f6f7f9; padding: .2em .4em; } li.checks { color: #555; }
.label { font-size: 11px; color: #777; } tr.missing td, tr.differs td { background: #fdecea; }
.latency { color: #777; font-size: 12px; } td { vertical-align: top; }
figure.voice-chart { display: inline-block; margin: 0 1.5rem 1rem 0; } figure.voice-chart figcaption { font-size: 12px; color: #555; }
""" + EXPLAIN_STYLE


def _latest_latency_html(latest: pl.DataFrame, number: int) -> str:
    """The latest run's latency panel per domain (``LATENCY_PANEL``, as ``scorelake latency`` prints it)."""
    if latest.is_empty():
        return ""
    rows = "".join(f"<tr><td>{html.escape(r['domain'])}</td>{LATENCY_PANEL.html_cells(r)}</tr>"
                   for r in latest.iter_rows(named=True))
    return (f"<p class='note'>The latest run (#{number}), in milliseconds:</p><table id='latest-latency'>"
            f"<tr><th>domain</th>{LATENCY_PANEL.html_headings()}</tr>{rows}</table>")


def _latency_html(latency: pl.DataFrame) -> str:
    if latency.is_empty():
        return "<p class='note'>No run records response latency.</p>"
    return ("<p class='note'>Per run: the box spans p25 to p75 with the median across it, whiskers p5 to p95, "
            "the dot the slowest exchange (hollow at the top edge when off the scale).</p><div id='latency-charts'></div>")


def _voice_html(voice: pl.DataFrame, order: list[str]) -> str:
    """Each voice metric across runs as bars drawn on the server (a run's number under its bar), and
    the failed scenarios of each run by cause."""
    if voice.is_empty():
        return "<p class='note'>No run records speech to measure.</p>"
    rows = sorted(voice.iter_rows(named=True), key=lambda r: order.index(r["run_id"]))
    charts = []
    for metric in VOICE_PANEL.metrics:  # a value below MIN_EVENTS events reads as a dash, with no bar
        said = [shown(r, metric) for r in rows]
        values = [r[metric.name] if text not in ("", DASH) else None for r, text in zip(rows, said)]
        top = max((abs(v) for v in values if v is not None), default=0) or 1
        bars = "".join(
            f"<g><rect x='{8 + i * 56}' y='{98 - abs(v) / top * 80:.1f}' width='40' height='{abs(v) / top * 80:.1f}' "
            f"fill='#4a7bd0'><title>#{i + 1} {html.escape(r['run_id'])}: {text}</title></rect>"
            f"<text x='{28 + i * 56}' y='112' font-size='10' text-anchor='middle'>#{i + 1}</text>"
            f"<text x='{28 + i * 56}' y='{94 - abs(v) / top * 80:.1f}' font-size='9' text-anchor='middle'>"
            f"{text}</text></g>" if v is not None else
            (f"<text x='{28 + i * 56}' y='94' font-size='9' text-anchor='middle'>{text}</text>" if text else "")
            for i, (r, v, text) in enumerate(zip(rows, values, said)))
        charts.append(f"<figure class='voice-chart' data-metric='{metric.name}' title='{html.escape(metric.doc)}'>"
                      f"<figcaption>{html.escape(metric.label)}</figcaption>"
                      f"<svg viewBox='0 0 {16 + 56 * len(rows)} 116' width='{16 + 56 * len(rows)}' height='116'>"
                      f"{bars}</svg></figure>")
    causes = "".join(
        f"<tr><td>{html.escape(r['run_id'])}</td><td class=num>{r['failed']}</td>"
        + "".join(f"<td class=num>{r['failed_' + c] or ''}</td>" for c, _ in CAUSE_DOCS) + "</tr>" for r in rows)
    return ("<p class='note'>Per run, the whole run (see the manual's \"Voice\"); runs numbered as above. "
            f"{html.escape(VOICE_PANEL.note)}</p>"
            f"<div id='voice-charts'>{''.join(charts)}</div><table id='failure-causes'><tr><th>run</th><th>failed</th>"
            + "".join(f"<th title='{html.escape(doc)}'>{c}</th>" for c, doc in CAUSE_DOCS) + f"</tr>{causes}</table>")


def render_report(history: pl.DataFrame, runs: pl.DataFrame, comparison: Comparison | None,
                  stalled: pl.DataFrame, policy_name: str, pages: dict | None = None,
                  latency: pl.DataFrame | None = None, voice: pl.DataFrame | None = None,
                  latest_latency: pl.DataFrame | None = None, headlines: Sequence[Headline] = ()) -> str:
    """``history``: run_history rows of one policy; ``runs``: the run legend (run_id, started, group),
    each with its ``headlines`` line;
    ``latency``: each run and domain's response latency percentiles (report_latency); ``voice``: each
    run's voice panel (report_voice); ``latest_latency``: the latest run's latency panel per domain
    (``Warehouse.latency``);
    ``pages``: (run, scenario) -> its Explanation, for the scenarios the report links to (each
    regressed or stalled one), rendered at the end as the scenario page of ``scorelake view``."""
    pages = pages or {}
    latency = pl.DataFrame() if latency is None else latency
    appendix = "".join(f"<section class='scenario' id='{anchor(run, scenario)}'>{explain_html(e)}</section>"
                       for (run, scenario), e in pages.items())
    said = {h.run_id: headline_facts(h) for h in headlines}
    legend = "".join(
        f"<li>#{i + 1} <b>{html.escape(r['run_id'])}</b> ({r['session_started_at'] or 'no timestamp'}, "
        f"{html.escape(str(r['source']))}, group {html.escape(str(r['run_group']))})"
        f"{': ' + html.escape(said[r['run_id']]) if r['run_id'] in said else ''}</li>"
        for i, r in enumerate(runs.iter_rows(named=True)))
    chart_rows = history.select("domain", "run_id", "success_rate", "success_ci_low", "success_ci_high",
                                "success_passed", "success_total", "change", "broken", "fixed").to_dicts()
    return titled_headings(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>scorelake report</title><style>{_STYLE}</style></head>
<body>
<h1>scorelake report</h1>
<p class="note">Policy <b>{html.escape(policy_name)}</b> · {len(runs)} run(s) · generated
{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}</p>
<h2>Composite success by domain across runs</h2>
<p class="note">Bars: rate; whiskers: Wilson 95% interval; ▼ / ▲: regressed / improved on the run before it in
its group beyond the noise (exact McNemar on the scenarios both ran the same way). Runs in session order:</p>
<ul id="runs">{legend}</ul>
<div id="charts"></div>
<h2>Response latency by domain across runs</h2>
{_latency_html(latency)}
{_latest_latency_html(pl.DataFrame() if latest_latency is None else latest_latency, len(runs))}
<h2>Voice across runs: what was heard, turn-taking, and why scenarios failed</h2>
{_voice_html(pl.DataFrame() if voice is None else voice, runs["run_id"].to_list())}
<h2>Latest run against the previous one</h2>
{_comparison_html(comparison, pages)}
<h2>Stalled scenarios</h2>
{_stalled_html(stalled, pages)}
<h2>Scenarios</h2>
<p class="note">Each regressed or stalled scenario above: why it failed, its transcript and tool calls.</p>
{appendix}
<script type="application/json" id="latency-data">{_json(latency.to_dicts())}</script>
<script type="application/json" id="history-data">{_json({"runs": runs["run_id"].to_list(), "rows": chart_rows})}</script>
<script>{_SCRIPT}</script>
</body></html>
""")
