"""The viewer's voice: a scenario's speech timeline (two lanes, drawn on the server) with what each
side heard, and a run's voice page. Pure functions of the API's answers; every value escaped."""

from __future__ import annotations

import difflib
import json

import polars as pl

from scorelake.present import CAUSE_DOCS, VOICE_PANEL, cause_counts
from scorelake.transforms.results import SpeechTimeline
from scorelake.transforms.voice import words
from scorelake.web._pages import esc, link, scenario_link, segment

# the timeline's drawing: its width, the room left of the lanes for their names, a lane's height, the room above
WIDTH, LEFT, LANE, TOP = 900, 42, 26, 22


def timeline_svg(timeline: SpeechTimeline) -> str:
    """The measured timeline (``speech_timeline``) drawn, its seconds mapped to pixels: two lanes,
    agent above the user, each segment a bar (its words on hover; one clipped labelled with its
    logged length), where both speak in red across both, the long silences hatched with their
    length, each response latency labelled, and the dead air after the last speech at the end."""
    start, span = timeline.start, timeline.span

    def x(t: float) -> float:
        return LEFT + (t - start) / span * (WIDTH - LEFT)

    lanes = {"agent": TOP, "user": TOP + LANE + 8}
    height = TOP + 2 * LANE + 30
    parts = [f'<svg id="speech-timeline" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
             f'preserveAspectRatio="none" style="max-width:{WIDTH}px" data-start="{start}" data-span="{span}" '
             f'data-left="{LEFT}" data-width="{WIDTH}">',
             f'<line id="cursor" x1="{LEFT}" x2="{LEFT}" y1="{TOP - 4}" y2="{TOP + 2 * LANE + 12}" stroke="#d33" '
             'stroke-width="1.5"/>',
             *(f'<text x="2" y="{y + LANE / 2 + 4:.0f}" font-size="11" fill="#555">{name}</text>'
               for name, y in lanes.items())]
    for s in timeline.segments:
        parts.append(f'<rect class="seg {s.speaker}" data-t="{s.start}" x="{x(s.start):.1f}" y="{lanes[s.speaker]}" '
                     f'width="{max(x(s.end) - x(s.start), 1):.1f}" height="{LANE}" '
                     f'fill="{"#4a7bd0" if s.speaker == "agent" else "#6aa86b"}"><title>{esc(s.speaker)} '
                     f'{s.start:.1f}-{s.logged_end:.1f} s: {esc(s.words)}</title></rect>')
        if s.clipped:
            parts.append(f'<text class="clipped" x="{x(s.end) - 2:.1f}" y="{lanes[s.speaker] + LANE / 2 + 4:.0f}" '
                         f'font-size="10" fill="#fff" text-anchor="end">clipped: {s.logged_end - s.start:.1f} s</text>')
    for both in timeline.overlaps:
        parts.append(f'<rect class="overlap" x="{x(both.start):.1f}" y="{TOP}" '
                     f'width="{max(x(both.end) - x(both.start), 1):.1f}" height="{2 * LANE + 8}" fill="#b3261e" '
                     f'fill-opacity=".45"><title>both speak {both.seconds:.1f} s</title></rect>')
    for gap in timeline.long_silences:
        x0, x1 = x(gap.start), x(gap.end)
        parts.append(f'<rect class="silence" x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" height="{2 * LANE + 8}" '
                     f'fill="#999" fill-opacity=".18"><title>silence {gap.seconds:.1f} s</title></rect>'
                     f'<text x="{(x0 + x1) / 2:.1f}" y="{height - 4}" font-size="10" fill="#777" '
                     f'text-anchor="middle">{gap.seconds:.1f} s</text>')
    for response in timeline.responses:
        parts.append(f'<text class="latency-label" x="{x((response.turn_end + response.answer) / 2):.1f}" '
                     f'y="{TOP - 6}" font-size="10" fill="#2b55b0" text-anchor="middle">'
                     f'{response.latency_s:.1f} s</text>')
    after = (f" · then {timeline.dead_air_after_s:.1f} s of dead air to the {timeline.call_end or 'end'}"
             if timeline.dead_air_after_s else "")
    parts.append(f'<text class="span" x="{WIDTH - 2}" y="{height - 4}" font-size="10" fill="#555" text-anchor="end">'
                 f'{span:.0f} s{esc(after)}</text></svg>')
    return "".join(parts)


def _diff_html(said: str | None, heard: str | None) -> tuple[str, str]:
    """Both texts as words, the ones that differ marked (said: struck; heard: underlined)."""
    a, b = words(said or ""), words(heard or "")
    left, right = [], []
    for op, i0, i1, j0, j1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            left.append(esc(" ".join(a[i0:i1])))
            right.append(esc(" ".join(b[j0:j1])))
        else:
            if i1 > i0:
                left.append(f"<del>{esc(' '.join(a[i0:i1]))}</del>")
            if j1 > j0:
                right.append(f"<ins>{esc(' '.join(b[j0:j1]))}</ins>")
    return " ".join(left), " ".join(right)


# The player's link to the timeline: a cursor that follows it, a bar that seeks to its start when clicked.
_PLAYER_SCRIPT = """<script>(function () {
  var audio = document.getElementById('recording'), svg = document.getElementById('speech-timeline');
  if (!audio || !svg) return;
  var cursor = document.getElementById('cursor'), d = svg.dataset;
  var x = function (t) { return +d.left + (t - d.start) / d.span * (d.width - d.left); };
  audio.addEventListener('timeupdate', function () {
    var at = Math.min(Math.max(x(audio.currentTime), +d.left), +d.width);
    cursor.setAttribute('x1', at); cursor.setAttribute('x2', at);
  });
  svg.querySelectorAll('rect.seg').forEach(function (bar) {
    bar.style.cursor = 'pointer';
    bar.addEventListener('click', function () { audio.currentTime = +bar.dataset.t; audio.play(); });
  });
})();</script>"""


def voice_section(row: dict | None, timeline: SpeechTimeline | None, audio: str | None = None) -> str:
    """A scenario's voice: the facts, the recording (``audio``: its address, where the viewer can
    serve it) above the timeline it drives (``timeline``, measured), what each side heard of the
    other's turns."""
    if row is None:
        return ""
    # the panel's metrics as this scenario has them (VOICE_PANEL: the headings every face uses)
    facts = zip(VOICE_PANEL.metrics, VOICE_PANEL.cells(row, events=False))
    shown_facts = " · ".join(
        [*([f"the call ended <b>{esc(row['call_end'])}</b>"] if row["call_end"] else []),
         *(f'<span title="{esc(metric.doc)}">{esc(metric.label)} <b>{esc(value)}</b></span>'
           for metric, value in facts if value)])
    parts = [f'<h2 id="voice">Voice</h2><p class="note">{shown_facts}</p>']
    misheard = json.loads(row["misheard_json"]) if row["misheard_json"] else []
    if misheard:
        parts.append("<p id=\"misheard\">misheard: " + ", ".join(
            f"<b>{esc(m['entity'])}</b> heard as <b>{esc(m['heard'] or '')}</b>" for m in misheard) + "</p>")
    if audio:
        parts.append(f'<audio id="recording" controls preload="metadata" src="{esc(audio)}"></audio>')
    if timeline is not None:
        parts.append(timeline_svg(timeline))
        parts.append('<p class="note">Agent above, user below; red: both speak; grey: a silence over 2 s; blue '
                     "numbers: the agent's response latency. Hover a bar for its words"
                     + ("; click it to hear it (the line follows the recording)" if audio else "") + ".</p>")
        if audio:
            parts.append(_PLAYER_SCRIPT)
    pairs = json.loads(row["heard_json"]) if row["heard_json"] else []
    if pairs:
        cells = "".join("<tr><td>{}</td><td>{}</td></tr>".format(*_diff_html(said, heard)) for said, heard in pairs)
        parts.append('<table id="heard"><tr><th>the user said</th><th>the agent heard</th></tr>'
                     f"{cells}</table>")
    return "".join(parts)


def voice_page(run: str, panel: pl.DataFrame, scenarios: pl.DataFrame, policy: str) -> str:
    """A run's voice: the panel per domain (``VOICE_PANEL``, each heading titled with its meaning),
    then its failed scenarios by cause, each linked."""
    back = link(f"/runs/{segment(run)}", policy=policy)
    head = f'<p><a href="{back}">back to {esc(run)}</a></p><h1>{esc(run)}: voice</h1>'
    if panel.is_empty():
        return f"{head}<p id=\"no-voice\">This run records no speech to measure.</p>"

    def domain_row(r: dict) -> str:
        return (f"<tr><td>{esc(r['domain'])}</td><td class=num>{r['scenarios']}</td>"
                + VOICE_PANEL.html_cells(r)
                + f"<td class=num>{'' if r['interrupted_turns'] is None else r['interrupted_turns']}</td>"
                + f"<td>{esc(cause_counts(r))}</td></tr>")

    rows = "".join(domain_row(r) for r in panel.iter_rows(named=True))
    failed = scenarios.filter(pl.col("failure_cause").is_not_null())
    listed = "".join(
        f'<tr><td><a href="{scenario_link(run, r["scenario_name"], policy)}#voice">'
        f'{esc(r["scenario_name"])}</a></td><td>{esc(r["failure_cause"])}</td><td>{esc(r["failure_evidence"])}</td></tr>'
        for r in failed.sort("failure_cause", "scenario_name").iter_rows(named=True))
    causes = "; ".join(f"{name}: {doc}" for name, doc in CAUSE_DOCS)
    return (f"{head}<table id=\"voice-panel\"><tr><th>domain</th><th>scenarios</th>{VOICE_PANEL.html_headings()}"
            '<th>interrupted</th>'
            f'<th title="{esc(causes)}">failed by cause</th></tr>'
            f"{rows}</table><p class=\"note\">{esc(VOICE_PANEL.note)}</p>"
            f"<h2>Failed scenarios by cause (policy {esc(policy)})</h2><table id=\"causes\"><tr><th>scenario</th>"
            f"<th>cause</th><th>evidence</th></tr>{listed}</table>")
