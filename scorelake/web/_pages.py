"""The pages of ``scorelake view`` as HTML, from the API's answers: the runs with their domains'
rates, a run's scenarios (filtered, sorted, paged), one scenario's explanation, two runs side by side;
with reviews on, a scenario's review forms and the review queue.
Pure functions of DataFrames and dicts; every value from run data is escaped."""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

import polars as pl

from scorelake.present import (
    EXPLAIN_STYLE,
    LATENCY_PANEL,
    Explanation,
    explain_html,
    headline_facts,
    listed,
    mcnemar_text,
    not_compared,
    titled_headings,
)
from scorelake.transforms.names import REVIEW_PICKS, SIGNALS
from scorelake.transforms.results import Headline, StandingReview

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem 2rem; color: #1d2330; }
@media (max-width: 900px) { body { margin: 1rem .8rem; } }
nav { margin-bottom: 1rem; } nav a { margin-right: 1rem; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; display: block; max-width: 100%; overflow-x: auto; }
td, th { padding: .2rem .6rem; border-bottom: 1px solid #dde; text-align: left; vertical-align: top; }
td, h1, h2, p, li, code, summary { overflow-wrap: anywhere; } th { white-space: nowrap; }
td:first-child { min-width: 10rem; } select, input { max-width: 100%; } select { max-width: 22rem; }
svg { max-width: 100%; height: auto; }
th { background: #f3f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td:nth-child(2) { color: #b3261e; } tr.passed td:nth-child(2) { color: #1b7a36; }
.headline { font-weight: 600; margin: .2rem 0 .5rem; }
.mark { font-size: 11px; padding: 0 .3rem; border-radius: 3px; background: #fff3cd; color: #7a5b00; white-space: nowrap; }
.outcome.failed b { color: #b3261e; } .outcome.passed b { color: #1b7a36; }
pre { white-space: pre-wrap; word-break: break-word; margin: .2rem 0; background: #f6f7f9; padding: .3rem; }
ol.transcript li { margin: .25rem 0; } li.turn.agent b { color: #2b55b0; } .latency { color: #777; font-size: 12px; }
form.filters { margin: .5rem 0 1rem; } form.filters > * { margin-right: .6rem; }
#scenarios td:first-child { max-width: 36rem; }
li.call { list-style: "⚙ "; background: #f6f7f9; padding: .2rem .4rem; } li.checks { list-style: "✓ "; color: #555; }
.label { font-size: 11px; color: #777; margin-top: .2rem; } table.action-keys pre { margin: 0; }
tr.missing td, tr.differs td { background: #fdecea; } div.action { margin-bottom: 1rem; }
nav .counts { color: #555; font-size: 12px; margin-right: 1rem; } nav .counts a { margin: 0; }
.workbench { display: flex; flex-direction: column; gap: 1rem; } .workbench aside { order: -1; }
.workbench > * { min-width: 0; }
@media (min-width: 1100px) { .workbench { display: grid; grid-template-columns: minmax(0, 1fr) minmax(18rem, 26rem); }
  .workbench aside { order: 0; position: sticky; top: .5rem; align-self: start; max-height: calc(100vh - 1rem);
                     overflow: auto; } }
aside table.review, aside table.review tbody, aside table.review tr, aside table.review td { display: block; }
aside table.review tr:first-child { display: none; }
aside table.review tr { padding: .3rem 0; border-bottom: 1px solid #dde; }
aside table.review td { border: 0; padding: .1rem 0; } aside input[name=note] { width: 100%; box-sizing: border-box; }
table.signals td:nth-child(2), table.action-keys td:last-child { overflow-wrap: normal; white-space: nowrap; }
.saved { background: #e6f4ea; color: #1b5e20; padding: .3rem .6rem; border-radius: 4px; }
kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 .25rem; font-size: 12px; }
form.review-form { margin: 0; } form.review-form button { margin-left: .3rem; } tr.reviewed { color: #777; }
""" + EXPLAIN_STYLE


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value))


def link(path: str, **query: object) -> str:
    """A URL of the app: ``path`` (already quoted) with the query parameters that are set."""
    params = {k: v for k, v in query.items() if v not in (None, "", False)}
    return esc(path + (f"?{urlencode(params)}" if params else ""))


def segment(value: str) -> str:
    """A run or scenario id as one path segment."""
    return quote(value, safe="")


def run_link(run: str, policy: str) -> str:
    """The address of a run's page (escaped for an attribute)."""
    return link(f"/runs/{segment(run)}", policy=policy)


def scenario_link(run: str, scenario: str, policy: str, **query: object) -> str:
    """The address of a scenario's page (escaped for an attribute)."""
    return link(f"/runs/{segment(run)}/scenarios/{segment(scenario)}", policy=policy, **query)


def page(title: str, body: str, policy: str, policies: list[str],
         review: ReviewNav | None = None) -> str:
    """A whole page: the navigation (with the review queue and its counts when the viewer takes
    reviews), a policy switcher (keeps the page, changes ``policy``), the body."""
    options = "".join(f'<option value="{esc(p)}"{" selected" if p == policy else ""}>{esc(p)}</option>'
                      for p in policies)
    queue = ""
    if review is not None:
        queue = (f'<a id="nav-review" href="{link("/review", policy=policy)}">review queue</a>'
                 f'<span class="counts">{review.to_review} to review · '
                 + (f"{review.mine} reviewed by {esc(review.reviewer)} · " if review.reviewer else "")
                 + f'<a href="{link("/review", pick="reviewers", policy=policy)}">'
                 f"{review.disagreeing} where reviewers disagree</a></span>")
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{esc(title)} · scorelake</title>'
            f'<style>{STYLE}</style></head><body><nav><a href="{link("/", policy=policy)}">runs</a>'
            f'{queue}<form class="policy" method="get" style="display:inline"><label>policy '
            f'<select name="policy" onchange="this.form.submit()">{options}</select></label></form></nav>'
            f"{titled_headings(body)}</body></html>")


@dataclass(frozen=True)
class ReviewNav:
    """What the navigation says of the review work under ``--review``."""

    to_review: int  # scenarios of the default queue nobody reviewed
    disagreeing: int  # scenarios whose reviewers disagree
    reviewer: str  # the reviewer this browser last saved as ("" before a first review)
    mine: int  # scenarios they reviewed


def token_page(review: bool) -> str:
    """What a request without the token gets: what a token is and where it comes from."""
    why = ("this viewer takes reviews (<code>scorelake view --review</code>), so every address needs it"
           if review else "this viewer is served off the loopback address, so every address needs it")
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>token needed · scorelake</title>'
            f'<style>{STYLE}</style></head><body><h1>A token is needed</h1><p>{why}.</p>'
            "<p>Open the address <code>scorelake view</code> printed when it started: it ends in "
            "<code>?token=…</code>. Or ask whoever started the viewer for the token and add "
            "<code>?token=TOKEN</code> to this address (a script sends <code>Authorization: Bearer TOKEN</code>).</p>"
            "<p>To choose the token yourself, start it with <code>scorelake view --review --token TOKEN</code>.</p>"
            "</body></html>")


def _pct(passed: int | None, total: int | None) -> str:
    return "" if not total else f"{passed / total * 100:.1f}% ({passed}/{total})"


def _points(delta: float | None) -> str:
    return "" if delta is None else f"{delta * 100:+.1f} pts"


def search_form(action: str, q: str | None, policy: str, keep: dict | None = None) -> str:
    """A search box: the scenarios whose transcript, judge reason or tool calls hold a phrase."""
    hidden = "".join(f'<input type="hidden" name="{k}" value="{esc(v)}">'
                     for k, v in {**(keep or {}), "policy": policy}.items() if v not in (None, "", False))
    return (f'<form class="filters search" method="get" action="{esc(action)}">{hidden}'
            f'<input name="q" id="q" value="{esc(q or "")}" placeholder="a phrase in a transcript, judge reason or '
            'tool call" size="40" maxlength="500"><button type="submit" id="search">search</button></form>')


def runs_page(runs: pl.DataFrame, rates: pl.DataFrame, policy: str, headlines: list[Headline]) -> str:
    """Every run, newest first: when it ran, its source, group and size, its headline (success, the
    change from the run before, judge errors, stalls, the worst domain), and the whole run's and its
    domains' composite and task rates."""
    said = {h.run_id: h for h in headlines}
    parts = ["<h1>Runs</h1>", search_form("/search", None, policy)]
    ids = runs["run_id"].to_list()
    if len(ids) >= 2:
        parts.append(f'<p><a href="{link("/compare", a=ids[-2], b=ids[-1], policy=policy)}">'
                     f"compare the last two runs</a></p>")
    for run in reversed(runs.to_dicts()):
        rows = rates.filter(pl.col("run_id") == run["run_id"])
        cells = "".join(
            f"<tr><td>{esc(r['domain'])}</td><td class=num>{r['scenarios']}</td>"
            f"<td class=num>{_pct(r['success_passed'], r['success_total'])}</td>"
            f"<td class=num>{_pct(r['task_passed'], r['task_total'])}</td><td class=num>{r['stalled']}</td></tr>"
            for r in rows.iter_rows(named=True))
        href = link(f"/runs/{segment(run['run_id'])}", policy=policy)
        started = str(run["session_started_at"])[:16] if run.get("session_started_at") else "no start time recorded"
        parts.append(f'<h2 class="run"><a href="{href}">{esc(run["run_id"])}</a></h2>'
                     f'<p class="run-info">{esc(started)} · {esc(run["source"])} · group {esc(run["run_group"])} · '
                     f"{run['n_scenarios']} scenarios, {run['n_quarantined']} quarantined · {esc(run['status'])}</p>"
                     + (f'<p class="headline">{esc(headline_facts(said[run["run_id"]]))}</p>'
                        if run["run_id"] in said else "") +
                     "<table><tr><th>domain</th><th>n</th><th>success</th><th>task</th><th>stalled</th></tr>"
                     f"{cells}</table>")
    return "\n".join(parts)


def run_page(run: str, rows: pl.DataFrame, domains: list[str], sorts: tuple[str, ...], query: dict, policy: str,
             page_size: int) -> str:
    """A run's scenarios: filters (failed only, domain, failed signal), sorting (by one of ``sorts``), paging."""
    matching = rows["matching"][0] if rows.height else 0
    offset = query.get("offset", 0)
    base = f"/runs/{segment(run)}"
    # the filters as the address carries them (failed only: "1", as the form sends it)
    keep = {**{k: query.get(k) for k in ("domain", "signal", "sort", "q")}, "failed": "1" if query.get("failed") else None}
    domain_options = '<option value="">every domain</option>' + "".join(
        f'<option value="{esc(d)}"{" selected" if d == query.get("domain") else ""}>{esc(d)}</option>' for d in domains)
    signal_options = '<option value="">any signal</option>' + "".join(
        f'<option value="{esc(s)}"{" selected" if s == query.get("signal") else ""}>{esc(s)}</option>'
        for s in (*SIGNALS, "stalled"))
    sort_options = "".join(f'<option value="{s}"{" selected" if s == query.get("sort") else ""}>{s}</option>'
                           for s in sorts)
    hidden = f'<input type="hidden" name="policy" value="{esc(policy)}">'
    form = (f'<form class="filters" method="get" action="{esc(base)}">{hidden}'
            f'<label><input type="checkbox" name="failed" value="1" id="failed-only"'
            f'{" checked" if query.get("failed") else ""}> failed only</label>'
            f'<select name="domain" id="domain">{domain_options}</select>'
            f'<select name="signal" id="signal">{signal_options}</select>'
            f'<label>sort <select name="sort" id="sort">{sort_options}</select></label>'
            f'<input name="q" id="q" value="{esc(query.get("q") or "")}" placeholder="a phrase" size="24" maxlength="500">'
            '<button type="submit" id="apply">apply</button></form>')
    body = []
    for r in rows.iter_rows(named=True):
        outcome = {True: "passed", False: "failed"}.get(r["is_successful"], "n/a")
        failed_by = ", ".join([*r["failed"], *(["stalled"] if r["stalled"] else [])])
        href = scenario_link(run, r["scenario_name"], policy)
        score = "" if r["judge_score"] is None else f"{r['judge_score']:.2f}"
        turns = "" if r["agent_turns"] is None else r["agent_turns"]
        mark = ' <span class="mark judge-error" title="the judge failed (upstream scored it 0.0), not the agent">' \
               'judge error</span>' if r.get("judge_error") else ""
        body.append(f'<tr class="{outcome}"><td><a class="scenario" href="{href}">{esc(r["scenario_name"])}</a></td>'
                    f"<td>{outcome}{mark}</td><td>{esc(r['domain'])}</td><td>{esc(failed_by)}</td>"
                    f"<td class=num>{score}</td><td class=num>{turns}</td><td>{esc(r['stop_reason'])}</td></tr>")
    pager = []
    if offset > 0:
        pager.append(f'<a href="{link(base, **keep, policy=policy, offset=max(offset - page_size, 0))}">'
                     "previous</a>")
    if offset + page_size < matching:
        pager.append(f'<a id="next" href="{link(base, **keep, policy=policy, offset=offset + page_size)}">'
                     "next</a>")
    latency = link(f"{base}/latency", policy=policy)
    flaky = link(f"{base}/flaky", policy=policy)
    voice = link(f"{base}/voice", policy=policy)
    export = link(f"{base}/export.csv", **keep, policy=policy)
    judged = link(f"{base}/judge", policy=policy)
    return (f"<h1>{esc(run)}</h1><p><a id=\"latency-link\" href=\"{latency}\">response latency</a> · "
            f"<a id=\"judge-link\" href=\"{judged}\">judge scores</a> · "
            f"<a id=\"voice-link\" href=\"{voice}\">voice</a> · "
            f"<a id=\"flaky-link\" href=\"{flaky}\">flaky tasks</a></p>"
            f"{form}<p id=\"matching\">{matching} scenarios match; showing {offset + 1 if rows.height else 0}"
            f"–{offset + rows.height} · <a id=\"export\" href=\"{export}\">all of them as CSV</a></p>"
            "<table id=\"scenarios\"><tr><th>scenario</th><th>outcome</th><th>domain</th>"
            f"<th>failed by</th><th>judge score</th><th>agent turns</th><th>stop reason</th></tr>{''.join(body)}</table>"
            f"<p>{' · '.join(pager)}</p>")


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def _histogram_svg(histogram: pl.DataFrame) -> str:
    """Bars of exchanges per latency bin, the open last bin marked, a y-axis of exchanges; drawn on
    the server (no script). The labels stay inside the drawing: the last one ends at its right edge."""
    tallest = max(histogram["exchanges"].max() or 1, 1)
    left, width, height = 44, 640, 160
    bar = (width - left) / histogram.height
    parts = [f'<svg id="latency-histogram" width="{width}" height="{height + 34}" role="img" '
             f'viewBox="0 0 {width} {height + 34}"><line x1="{left}" y1="{height}" x2="{width}" y2="{height}" '
             f'stroke="#999"/><line x1="{left}" y1="12" x2="{left}" y2="{height}" stroke="#999"/>'
             f'<text x="{left - 4}" y="{height}" font-size="10" fill="#555" text-anchor="end">0</text>'
             f'<text x="{left - 4}" y="16" font-size="10" fill="#555" text-anchor="end">{tallest:,}</text>'
             f'<text x="2" y="{height // 2}" font-size="10" fill="#555">exch.</text>']
    for i, r in enumerate(histogram.iter_rows(named=True)):
        h = r["exchanges"] / tallest * (height - 12)
        span = f"≥ {_ms(r['low_ms'])} ms" if r["high_ms"] is None else f"{_ms(r['low_ms'])}–{_ms(r['high_ms'])} ms"
        parts.append(f'<rect class="bin" x="{left + i * bar + 1:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" '
                     f'height="{h:.1f}" fill="{"#b3261e" if r["high_ms"] is None else "#4a7bd0"}" '
                     f'data-exchanges="{r["exchanges"]}"><title>{esc(span)}: {r["exchanges"]} exchanges</title></rect>')
    last = histogram.height - 1
    for i, anchor in {0: "start", histogram.height // 2: "middle", last: "end"}.items():
        r = histogram.row(i, named=True)
        x = width - 2 if i == last else left + i * bar + (bar / 2 if anchor == "middle" else 2)
        parts.append(f'<text x="{x:.1f}" y="{height + 14}" font-size="10" fill="#555" text-anchor="{anchor}">'
                     f'{"≥ " if r["high_ms"] is None else ""}{_ms(r["low_ms"])} ms</text>')
    return "".join(parts) + "</svg>"


def marked(text: str | None, phrase: str) -> str:
    """``text`` escaped, each occurrence of ``phrase`` (any case) in a ``<mark>``."""
    if not text:
        return ""
    pieces = re.split(f"({re.escape(phrase)})", text, flags=re.IGNORECASE)
    return "".join(f"<mark>{esc(p)}</mark>" if i % 2 else esc(p) for i, p in enumerate(pieces))


def judge_scores_page(run: str, histogram: pl.DataFrame, policy: str) -> str:
    """A run's judge scores per domain, each domain's ten bins of 0.1 drawn beside its threshold(s)."""
    parts = [_run_subpage_head(run, "judge scores", policy),
             "<p>Scenarios per judge score, in bins of 0.1; the red line is the threshold in use (a score "
             "at or above it passes JUDGE_PASSED).</p>"]
    if histogram.is_empty():
        return "".join(parts) + "<p>No judge scores under this policy.</p>"
    for (domain,), rows in histogram.group_by("domain", maintain_order=True):
        counts = dict(zip(rows["bin"], rows["scenarios"]))
        tallest, width, height, bar = max(counts.values()), 320, 90, 30
        svg = [f'<svg class="judge-scores" width="{width}" height="{height + 16}" role="img" '
               f'viewBox="0 0 {width} {height + 16}"><line x1="0" y1="{height}" x2="{bar * 10}" y2="{height}" '
               'stroke="#999"/>']
        for b in range(10):
            h = counts.get(b, 0) / tallest * (height - 10)
            svg.append(f'<rect x="{b * bar + 1}" y="{height - h:.1f}" width="{bar - 2}" height="{h:.1f}" '
                       f'fill="#4a7bd0"><title>{b / 10:.1f}-{(b + 1) / 10:.1f}: {counts.get(b, 0)} scenarios</title>'
                       "</rect>")
        thresholds = [t for t in rows["thresholds"][0] if t is not None]
        for t in thresholds:
            svg.append(f'<line class="threshold" x1="{t * bar * 10:.1f}" y1="0" x2="{t * bar * 10:.1f}" '
                       f'y2="{height}" stroke="#b3261e" stroke-width="2"><title>threshold {t:g}</title></line>')
        svg.append(f'<text x="0" y="{height + 13}" font-size="10" fill="#555">0</text>'
                   f'<text x="{bar * 10}" y="{height + 13}" font-size="10" fill="#555" text-anchor="end">1</text>'
                   "</svg>")
        used = ", ".join(f"{t:g}" for t in thresholds) or "none"
        parts.append(f"<h2>{esc(domain)}</h2><p>{sum(counts.values())} scored; threshold in use: {used}</p>"
                     + "".join(svg))
    return "".join(parts)


def search_page(q: str | None, found: pl.DataFrame | None, policy: str, limit: int) -> str:
    """Scenarios of every run whose transcript, judge reason or tool calls hold a phrase."""
    form = search_form("/search", q, policy)
    if found is None:
        return f"<h1>Search</h1>{form}"
    rows = "".join(
        f'<tr><td><a href="{run_link(r["run_id"], policy)}">{esc(r["run_id"])}'
        f'</a></td><td><a href="' + scenario_link(r["run_id"], r["scenario_name"], policy)
        + f'">{esc(r["scenario_name"])}</a></td><td>{esc(r["domain"])}</td>'
        f'<td>{ {True: "passed", False: "failed"}.get(r["is_successful"], "n/a")}</td><td class=num>{r["hits"]}</td>'
        f'<td>{esc(r["place"])}</td><td>{marked(r["snippet"], q)}</td></tr>' for r in found.iter_rows(named=True))
    more = f"<p class=\"note\">The first {limit} shown.</p>" if found.height >= limit else ""
    return (f"<h1>Search</h1>{form}<p id=\"found\">{found.height} scenario(s) mention “{esc(q)}”</p>{more}"
            '<table id="results"><tr><th>run</th><th>scenario</th><th>domain</th><th>outcome</th><th>places</th>'
            f"<th>first found in</th><th>around it</th></tr>{rows}</table>")


def _run_subpage_head(run: str, what: str, policy: str) -> str:
    """The top of a page about one run: the way back to the run, and its title."""
    return (f'<p><a href="{link(f"/runs/{segment(run)}", policy=policy)}">back to {esc(run)}</a></p>'
            f"<h1>{esc(run)}: {what}</h1>")


def latency_page(run: str, by_domain: pl.DataFrame, histogram: pl.DataFrame, slowest: pl.DataFrame,
                 policy: str) -> str:
    """A run's response latency: per domain (the runner's percentiles), its distribution and its
    slowest exchanges, each linked to its scenario's transcript."""
    head = _run_subpage_head(run, "latency", policy)
    if histogram.is_empty():
        return f"{head}<p id=\"no-latency\">This run records no response latency.</p>"
    rows = "".join(
        f"<tr><td>{esc(r['domain'])}</td>{LATENCY_PANEL.html_cells(r)}"
        + f"<td class=num>{'' if r['interrupted'] is None else r['interrupted']}</td></tr>"
        for r in by_domain.iter_rows(named=True))

    def exchange(r: dict) -> str:
        href = scenario_link(run, r["scenario_name"], policy)
        return (f'<tr><td class=num>{_ms(r["latency_ms"])}</td><td><a href="{href}">{esc(r["scenario_name"])}</a> '
                f'#{r["ordinal"]}</td><td>{esc(r["domain"])}</td><td>{esc(r["user_text"])}</td>'
                f'<td>{esc(r["agent_text"])}</td></tr>')

    exchanges = "".join(exchange(r) for r in slowest.iter_rows(named=True))
    return (f"{head}"
            f'<table id="latency"><tr><th>domain</th>{LATENCY_PANEL.html_headings()}'
            f'<th>interrupted</th></tr>{rows}</table>'
            '<p class="note">Milliseconds.</p>'
            "<h2>Distribution</h2><p class=\"note\">Exchanges per response latency, from 0 to the run's p99; the "
            f"last (red) bar holds the slower ones.</p>{_histogram_svg(histogram)}"
            f"<h2>Slowest exchanges</h2><table id=\"slowest\"><tr><th>ms</th><th>scenario, turn</th><th>domain</th>"
            f"<th>user said</th><th>agent answered</th></tr>{exchanges}</table>")


def flaky_page(run: str, flaky: pl.DataFrame, policy: str) -> str:
    """The tasks of a run whose verdict flips across the comparable runs (and trials) of its group."""
    head = _run_subpage_head(run, "flaky tasks", policy)
    if flaky.is_empty():
        return (f"{head}<p id=\"no-flaky\">No task of this run both passed and failed in its group's comparable "
                "runs.</p>")
    def row(r: dict) -> str:
        scenarios = ", ".join(f'<a href="{scenario_link(run, name, policy)}">{esc(name)}</a>'
                              for name in r["scenarios"] or [])
        return (f'<tr><td>{esc(r["task_id"])}</td><td>{scenarios}</td><td>{esc(r["domain"])}</td>'
                f'<td class=num>{r["verdicts"]}</td><td class=num>{r["passed"]}</td><td class=num>{r["failed"]}</td>'
                f'<td class=num>{r["flips"]}</td><td class=num>{r["flip_rate"] * 100:.0f}%</td></tr>')

    rows = "".join(row(r) for r in flaky.iter_rows(named=True))
    return (f"{head}<p class=\"note\">Across the runs of its group that ran each task "
            "with the same definition (and its trials), in session order: a flip is a verdict unlike the one "
            "before. A change between two runs made of these is likely noise.</p>"
            '<table id="flaky"><tr><th>task id</th><th>its scenarios here</th><th>domain</th><th>verdicts</th><th>passed</th><th>failed</th>'
            f"<th>flips</th><th>flip rate</th></tr>{rows}</table>")


KEYS_SCRIPT = """<script>
// a: agree with the outcome, d: disagree (under a queue: and go on), n: the next in the queue, u: undo what
// was just saved, /: search
document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || ["INPUT", "TEXTAREA", "SELECT"].includes(e.target.tagName)) return;
  const outcome = document.getElementById("review-is_successful-");
  const press = (cls) => { const b = outcome && (outcome.querySelector("button." + cls)
      || outcome.querySelectorAll("button")[cls === "agree" ? 0 : 1]); if (b) { e.preventDefault(); b.click(); } };
  if (e.key === "a") press("agree");
  else if (e.key === "d") press("disagree");
  else if (e.key === "n") {
    const next = document.getElementById("skip"); if (next) { e.preventDefault(); next.click(); } }
  else if (e.key === "u") {
    const undo = document.getElementById("undo"); if (undo) { e.preventDefault(); undo.click(); } }
  else if (e.key === "/") { const q = document.getElementById("q") || document.querySelector("aside input[name=note]");
    if (q) { e.preventDefault(); q.focus(); } }
});
</script>"""


@dataclass(frozen=True)
class Saved:
    """What a review form just did, carried to the page shown next (as JSON in its ``saved``
    parameter): said there with the scenario's name, and undone from there."""

    run: str
    scenario: str
    signal: str
    assertion: int | None
    verdict: str  # pass | fail | withdrawn; undone: the review was taken back

    def param(self) -> str:
        return json.dumps([self.run, self.scenario, self.signal, self.assertion, self.verdict])

    @staticmethod
    def parse(param: str | None) -> Saved | None:
        """The ``saved`` parameter read back; None for none, or for one not of this viewer's making."""
        try:
            run, scenario, signal, assertion, verdict = json.loads(param or "null")
            return Saved(str(run), str(scenario), str(signal), None if assertion is None else int(assertion),
                         str(verdict))
        except (TypeError, ValueError):
            return None

    def banner(self, policy: str, reviewer: str, queue: str | None) -> str:
        """The line that says what was saved, naming the scenario, and its undo button."""
        what = f"<code>{esc(self.signal)}{'' if self.assertion is None else f' #{self.assertion}'}</code>"
        where = f"<b>{esc(self.scenario)}</b> ({esc(self.run)})"
        if self.verdict == "undone":
            return f'<p id="saved" class="saved">Undone: your latest review of {what} on {where}.</p>'
        hidden = "".join(f'<input type="hidden" name="{k}" value="{esc(v)}">' for k, v in (
            ("run", self.run), ("scenario", self.scenario), ("signal", self.signal),
            ("assertion", "" if self.assertion is None else self.assertion), ("policy", policy),
            ("reviewer", reviewer), ("queue", queue or ""), ("undo", "1")))
        return (f'<form id="saved" class="saved" method="post" action="/review">{hidden}Saved: your verdict '
                f"<b>{esc(self.verdict)}</b> on {what} of {where}. "
                '<button type="submit" id="undo">undo</button></form>')


def scenario_page(explanation: Explanation, run: str, policy: str, extra: str = "",
                  review: str = "", saved: Saved | None = None, reviewer: str = "",
                  queue: str | None = None) -> str:
    """One scenario's explanation (and ``extra`` evidence: its voice); when the viewer takes
    reviews, the review panel beside it (sticky on a wide screen, on top on a narrow one), keyboard
    shortcuts, and what was just saved (naming the scenario, with its undo)."""
    back = link(f"/runs/{segment(run)}", policy=policy)
    evidence = f'<p><a href="{back}">back to {esc(run)}</a></p>{explain_html(explanation)}{extra}'
    if not review:
        return evidence
    banner = saved.banner(policy, reviewer, queue) if saved else ""
    keys = ('<p class="note keys">keys: <kbd>a</kbd> agree, <kbd>d</kbd> disagree (with the outcome), <kbd>n</kbd> '
            "next in the queue, <kbd>u</kbd> undo what was just saved, <kbd>/</kbd> search or note</p>")
    return (f'<div class="workbench"><div class="evidence">{evidence}</div>'
            f'<aside class="review-panel">{banner}{review}{keys}</aside></div>{KEYS_SCRIPT}')


def _interval(low: float | None, high: float | None) -> str:
    return "" if low is None else f"{low * 100:.1f}–{high * 100:.1f}"


def compare_picker(runs: list[str], run_a: str | None, run_b: str | None, policy: str, maps: list[str] = (),
                   task_map: str | None = None) -> str:
    """Two run pickers: the baseline and the run compared with it; and, where task maps are declared,
    how their scenarios pair (by name, or by a map: runs of two harnesses)."""
    def options(chosen: str | None, values) -> str:
        return "".join(f'<option value="{esc(r)}"{" selected" if r == chosen else ""}>{esc(r)}</option>'
                       for r in values)

    hidden = f'<input type="hidden" name="policy" value="{esc(policy)}">'
    paired = (f'<label>paired <select name="map" id="task-map"><option value="">by name</option>'
              f'{options(task_map, maps)}</select></label>' if maps else "")
    return (f'<form class="filters" method="get" action="/compare">{hidden}<label>A <select name="a" id="run-a">'
            f'{options(run_a, runs)}</select></label><label>B <select name="b" id="run-b">{options(run_b, runs)}'
            f'</select></label>{paired}<button type="submit" id="compare">compare</button></form>')


def compare_page(run_a: str, run_b: str, comparison, policy: str, runs: list[str], maps: list[str] = ()) -> str:
    """Two runs side by side, like with like: per-domain composite rates with their intervals, the delta
    with its interval and the change's label, the scenarios that flipped, and what was not compared."""
    rows = "".join(
        f"<tr><td>{esc(r['domain'])}</td><td class=num>{_pct(r['passed_a'], r['total_a'])}</td>"
        f"<td class=num>{_interval(r['ci_low_a'], r['ci_high_a'])}</td>"
        f"<td class=num>{_pct(r['passed_b'], r['total_b'])}</td><td class=num>{_interval(r['ci_low_b'], r['ci_high_b'])}</td>"
        f"<td class=num>{_points(r['delta'])}</td><td class=num>{_interval(r['delta_ci_low'], r['delta_ci_high'])}</td>"
        f'<td class="{esc(r["label"] or "")}">{esc(r["label"] or "")}</td></tr>'
        for r in comparison.deltas.iter_rows(named=True))

    theirs = comparison.counterparts  # under a task map, B names the scenario its own way

    def flips(names: list[str], run: str) -> str:  # each flipped scenario as run B has it, and as run A had it
        return "".join(f'<li><a href="{scenario_link(run, theirs.get(n, n), policy)}">{esc(n)}</a> '
                       f'<span class="note">(<a class="in-a" href="{scenario_link(run_a, n, policy)}">in A</a>, '
                       f'<a class="in-b" href="{scenario_link(run, theirs.get(n, n), policy)}">in B</a>)</span></li>'
                       for n in names) or "<li>none</li>"

    apart = "".join(f"<li>{esc(words)} ({len(names)}): {esc(listed(names, more=' (the API or --format json for all)'))}"
                    "</li>" for words, names in not_compared(comparison))
    apart += "".join(f"<li>scored differently: {esc(change)}</li>" for change in comparison.lineage_changes)
    nothing = (f'<p class="note" id="nothing-matches">{esc(comparison.nothing_matches)}</p>'
               if comparison.nothing_matches else "")
    return (f"{compare_picker(runs, run_a, run_b, policy, maps, comparison.task_map)}<h1>{esc(run_a)} → "
            f"{esc(run_b)}</h1>{nothing}"
            "<table id=\"deltas\"><tr><th>domain</th><th>A</th><th>A 95% CI</th><th>B</th><th>B 95% CI</th>"
            f"<th>delta</th><th>delta 95% CI</th><th>change</th></tr>{rows}</table>"
            f"<h2>Fixed (failed → passed): {len(comparison.fixed)}</h2><ul id=\"fixed\">"
            f"{flips(comparison.fixed, run_b)}</ul><h2>Broken (passed → failed): {len(comparison.broken)}</h2>"
            f"<ul id=\"broken\">{flips(comparison.broken, run_b)}</ul><p>Exact {esc(mcnemar_text(comparison))}</p>"
            + _compare_latency(comparison) + _compare_voice(comparison)
            + (f'<h2>Not compared</h2><ul id="apart">{apart}</ul>' if apart else ""))


def _compare_latency(comparison) -> str:
    """The compared scenarios' response latency per domain in both runs (as `scorelake compare` prints it)."""
    if comparison.latency is None or not comparison.latency.height:
        return ""
    rows = "".join(
        f"<tr><td>{esc(r['domain'])}</td><td class=num>{r['median_a_ms']:.0f}</td>"
        f"<td class=num>{r['median_b_ms']:.0f}</td><td class=num>{r['delta_ms']:+.0f}</td>"
        f"<td class=num>[{r['delta_ci_low_ms']:+.0f}, {r['delta_ci_high_ms']:+.0f}]</td>"
        f"<td class=num>{r['p95_a_ms']:.0f}</td><td class=num>{r['p95_b_ms']:.0f}</td></tr>"
        for r in comparison.latency.iter_rows(named=True))
    slowed = "" if comparison.slowed is None or not comparison.slowed.height else (
        "<p class=\"note\">slowed most (median): " + esc(", ".join(
            f"{r['scenario_name']} (+{r['slower_ms']:.0f} ms)" for r in comparison.slowed.iter_rows(named=True)))
        + "</p>")
    return ('<h2>Response latency (ms) of the scenarios compared</h2><table id="compare-latency"><tr>'
            '<th>domain</th><th title="median response latency in run A">p50 A</th><th>p50 B</th>'
            '<th title="B minus A, medians">B-A</th><th title="bootstrap 95% interval of B-A">95% CI</th>'
            f'<th>p95 A</th><th>p95 B</th></tr>{rows}</table>{slowed}')


def _compare_voice(comparison) -> str:
    """The compared scenarios' voice per domain in both runs (as `scorelake compare` prints it)."""
    if comparison.voice is None or not comparison.voice.height:
        return ""
    share = lambda v: "" if v is None else f"{v * 100:.1f}%"  # noqa: E731
    seconds = lambda v: "" if v is None else f"{v:.2f}"  # noqa: E731
    rows = "".join(
        f"<tr><td>{esc(r['domain'])}</td><td class=num>{seconds(r['overlap_a_s'])}</td>"
        f"<td class=num>{seconds(r['overlap_b_s'])}</td><td class=num>{seconds(r['overlap_rise_s'])}</td>"
        f"<td class=num>{share(r['wer_a'])}</td><td class=num>{share(r['wer_b'])}</td>"
        f"<td class=num>{'' if r['wer_rise_pts'] is None else format(r['wer_rise_pts'], '+.1f')}</td>"
        f"<td class=num>{r['words_a'] or ''}</td><td class=num>{r['words_b'] or ''}</td>"
        f"<td class=num>{r['missing_a'] or ''}</td><td class=num>{r['missing_b'] or ''}</td></tr>"
        for r in comparison.voice.iter_rows(named=True))
    return ('<h2>Voice of the scenarios compared</h2><table id="compare-voice"><tr><th>domain</th>'
            '<th title="mean overlap of speech a scenario, run A (s)">overlap A s</th><th>overlap B s</th>'
            '<th>B-A s</th><th title="word error rate of what the agent heard, over the user turns it heard">WER A</th>'
            '<th>WER B</th><th>B-A pts</th><th title="words the user said in the turns the agent heard">words A</th>'
            '<th>words B</th><th title="user turns the agent never heard">missing A</th><th>missing B</th></tr>'
            f'{rows}</table>')


def _verdict_word(passed: bool | None) -> str:
    return "not applicable" if passed is None else "passed" if passed else "failed"


def review_section(rows: list[dict], standing: list[StandingReview], run: str, scenario: str, policy: str,
                   reviewer: str, queue: str | None) -> str:
    """The review forms of a scenario page: per signal, per NL assertion and for the outcome, agree or
    disagree with what it is now (or pass / fail where it does not apply), with a note; ``rows``:
    signal, assertion, label, passed (now). Under a ``queue``, the outcome's buttons save and go on."""
    reviews: dict[tuple, list[StandingReview]] = {}
    for r in standing:
        reviews.setdefault((r.signal, r.assertion), []).append(r)
    parts = ['<h2 id="review">Review</h2><p class="note">Your verdict is kept with its history; a policy that takes '
             "reviews (<code>scorelake rescore --reviews</code>) counts it.</p>"
             '<table class="review"><tr><th>what</th><th>now</th><th>standing review</th><th>your verdict</th></tr>']
    for row in rows:
        signal, assertion, passed = row["signal"], row["assertion"], row["passed"]
        said = "; ".join(f"{esc(r.verdict)} by {esc(r.reviewer)}" + (f": {esc(r.note)}" if r.note else "")
                         for r in reviews.get((signal, assertion), []))
        onward = queue is not None and signal == "is_successful"
        if passed is None:
            buttons = [("pass", "pass"), ("fail", "fail")]
        else:
            buttons = [("agree", "pass" if passed else "fail"), ("disagree", "fail" if passed else "pass")]
        hidden = "".join(f'<input type="hidden" name="{k}" value="{esc(v)}">' for k, v in (
            ("run", run), ("scenario", scenario), ("signal", signal),
            ("assertion", "" if assertion is None else assertion), ("policy", policy),
            ("queue", queue or ""), ("onward", "1" if onward else "")))
        button_html = "".join(f'<button type="submit" name="verdict" value="{value}" class="{label}">'
                              f'{label}{" and next" if onward else ""}</button>' for label, value in buttons)
        form = (f'<form method="post" action="/review" class="review-form">{hidden}'
                f'<input name="note" placeholder="note" maxlength="2000"> '
                f'<input name="reviewer" placeholder="your name" required value="{esc(reviewer)}" size="10"> '
                f"{button_html}</form>")
        what = f"{esc(signal)}" + (f" #{assertion} {esc(row['label'] or '')}" if assertion is not None else "")
        key = f"{signal}-{'' if assertion is None else assertion}"
        parts.append(f'<tr id="review-{esc(key)}"><td><code>{what}</code></td><td>{_verdict_word(passed)}</td>'
                     f'<td class="standing">{said}</td><td>{form}</td></tr>')
    parts.append("</table>")
    if queue is not None:
        parts.append(f'<p><a id="skip" href="{esc("/review/next?" + queue + "&skip=" + quote(run + "/" + scenario))}">'
                     "skip to the next in the queue →</a></p>")
    return "".join(parts)


def queue_page(queue: pl.DataFrame, params: dict, runs: list[str], policy: str,
               progress: pl.DataFrame) -> str:
    """What to review next, with the choices that make the queue (what to pick, a run, a seed), and
    each reviewer's progress."""
    picks = "".join(f'<option value="{p}"{" selected" if p == params["pick"] else ""}>{label}</option>'
                    for p, label in REVIEW_PICKS.items())
    run_options = '<option value="">every run</option>' + "".join(
        f'<option value="{esc(r)}"{" selected" if r == params.get("run") else ""}>{esc(r)}</option>' for r in runs)
    form = (f'<form class="filters" method="get" action="/review">'
            f'<input type="hidden" name="policy" value="{esc(policy)}"><select name="pick" id="pick">{picks}</select>'
            f'<select name="run" id="run">{run_options}</select>'
            f'<label>judges or runs (A, B) <input name="a" value="{esc(params.get("a") or "")}" size="8"> '
            f'<input name="b" value="{esc(params.get("b") or "")}" size="8"></label>'
            f'<label>seed <input name="seed" id="seed" value="{esc(params["seed"])}" size="4"></label>'
            f'<label>per domain <input name="per_domain" value="{esc(params["per_domain"])}" size="3"></label>'
            f'<label>labels (active) <input name="budget" value="{esc(params["budget"])}" size="4"></label>'
            '<button type="submit" id="make-queue">show</button></form>')
    query = queue_query(params, policy)
    left = queue.filter(pl.col("reviews") == 0).height
    start = (f'<p><a id="start" href="{esc("/review/next?" + query)}">review the next one →</a></p>' if left else
             '<p id="done">every scenario of this queue has a review.</p>')
    body = []
    rows = list(queue.iter_rows(named=True))
    first = {}
    for n, r in enumerate(rows):
        first.setdefault(r["scenario_name"], n)
    shown = set()
    for r in sorted(rows, key=lambda r: first[r["scenario_name"]]):  # one scenario of several runs together
        href = scenario_link(r["run_id"], r["scenario_name"], policy, queue=query)
        state = "reviewed" if r["reviews"] else "unreviewed"
        name = esc(r["scenario_name"]) if r["scenario_name"] not in shown else "↳ the same scenario, in another run"
        shown.add(r["scenario_name"])
        body.append(f'<tr class="{state}"><td><a href="{href}">{name}</a></td>'
                    f'<td>{esc(r["run_id"])}</td><td>{esc(r["domain"])}</td><td>{esc(r["reason"])}</td>'
                    f'<td class=num>{r["reviews"]}</td></tr>')
    people = "".join(f'<tr><td>{esc(r["reviewer"])}</td><td class=num>{r["scenarios"]}</td>'
                     f'<td class=num>{r["verdicts"]}</td></tr>' for r in progress.iter_rows(named=True)
                     if r["reviewer"] != "(all)")
    export = f'<p><a id="export-reviews" href="{link("/review/export.csv")}">every review as CSV</a></p>'
    return (f"<h1>Review queue</h1>{form}<p id=\"left\">{left} of {queue.height} not reviewed yet</p>{start}"
            '<table id="queue"><tr><th>scenario</th><th>run</th><th>domain</th><th>why</th><th>reviews</th></tr>'
            f"{''.join(body)}</table>"
            + ('<h2>Progress per reviewer</h2><table id="progress"><tr><th>reviewer</th><th>scenarios</th>'
               f"<th>verdicts</th></tr>{people}</table>" if people else "") + export)


QUEUE_KEYS = ("pick", "run", "a", "b", "seed", "per_domain", "budget")


def queue_query(params: dict, policy: str) -> str:
    """The query string that makes a queue again (carried from page to page while reviewing)."""
    return urlencode({**{k: params[k] for k in QUEUE_KEYS if params.get(k) not in (None, "")}, "policy": policy})
