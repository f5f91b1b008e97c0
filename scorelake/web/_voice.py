"""The viewer's voice: a scenario's speech timeline (two lanes, drawn on the server) with what each
side heard, and a run's voice page. Pure functions of the API's answers; every value escaped."""

from __future__ import annotations

import difflib
import json
from itertools import pairwise

import polars as pl

from scorelake.transforms.columns import CAUSE_NAMES
from scorelake.transforms.voice import (
    AGENT,
    LONG_SEGMENT_S,
    USER,
    Segment,
    intersection,
    response_events,
    union,
    words,
)
from scorelake.web._pages import esc, link, scenario_link, segment

LONG_SILENCE_S = 2.0  # a silence longer than this is marked on the timeline
# the timeline's drawing: its width, the room left of the lanes for their names, a lane's height, the room above
WIDTH, LEFT, LANE, TOP = 900, 42, 26, 22


def _x(t: float, start: float, span: float) -> float:
    return LEFT + (t - start) / span * (WIDTH - LEFT)


def timeline_svg(voice: dict) -> str:
    """Two lanes, agent above the user: each segment a bar (its words on hover), overlaps in red
    across both, silences over 2 s hatched with their length, and each response latency labelled
    (the response events ``turn_taking`` counts, on its ticks); a segment longer than
    ``LONG_SEGMENT_S`` drawn clipped to it and labelled with its length, so one outlier does not
    squeeze the rest, and the dead air after the last speech written at the end. ``voice``: a
    ``voice`` row."""
    logged = [s for s in json.loads(voice["segments_json"]) if s[0] in (AGENT, USER)]
    segments = [(speaker, s0, min(s1, s0 + LONG_SEGMENT_S), said, s1) for speaker, s0, s1, said, *_ in logged]
    start, end = min(s[1] for s in segments), max(s[2] for s in segments)
    span = max(end - start, 1e-6)
    lanes = {"agent": TOP, "user": TOP + LANE + 8}
    height = TOP + 2 * LANE + 30
    parts = [f'<svg id="speech-timeline" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
             f'preserveAspectRatio="none" style="max-width:{WIDTH}px" data-start="{start}" data-span="{span}" '
             f'data-left="{LEFT}" data-width="{WIDTH}">',
             f'<line id="cursor" x1="{LEFT}" x2="{LEFT}" y1="{TOP - 4}" y2="{TOP + 2 * LANE + 12}" stroke="#d33" '
             'stroke-width="1.5"/>',
             *(f'<text x="2" y="{y + LANE / 2 + 4:.0f}" font-size="11" fill="#555">{name}</text>'
               for name, y in lanes.items())]
    for speaker, s0, s1, said, logged_end in segments:
        parts.append(f'<rect class="seg {speaker}" data-t="{s0}" x="{_x(s0, start, span):.1f}" y="{lanes[speaker]}" '
                     f'width="{max(_x(s1, start, span) - _x(s0, start, span), 1):.1f}" height="{LANE}" '
                     f'fill="{"#4a7bd0" if speaker == "agent" else "#6aa86b"}"><title>{esc(speaker)} '
                     f'{s0:.1f}-{logged_end:.1f} s: {esc(said)}</title></rect>')
        if logged_end > s1:
            parts.append(f'<text class="clipped" x="{_x(s1, start, span) - 2:.1f}" '
                         f'y="{lanes[speaker] + LANE / 2 + 4:.0f}" font-size="10" fill="#fff" '
                         f'text-anchor="end">clipped: {logged_end - s0:.1f} s</text>')
    measured = [Segment(*s[:4]) for s in segments]
    agent = union((s.start, s.end) for s in measured if s.speaker == "agent")
    user = union((s.start, s.end) for s in measured if s.speaker == "user")
    for low, high in intersection(agent, user):
        parts.append(f'<rect class="overlap" x="{_x(low, start, span):.1f}" y="{TOP}" '
                     f'width="{max(_x(high, start, span) - _x(low, start, span), 1):.1f}" '
                     f'height="{2 * LANE + 8}" fill="#b3261e" fill-opacity=".45"><title>both speak '
                     f'{high - low:.1f} s</title></rect>')
    anyone = union([*agent, *user])
    for (_, gap_start), (gap_end, _) in pairwise(anyone):
        if gap_end - gap_start > LONG_SILENCE_S:
            x0, x1 = _x(gap_start, start, span), _x(gap_end, start, span)
            parts.append(f'<rect class="silence" x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" height="{2 * LANE + 8}" '
                         f'fill="#999" fill-opacity=".18"><title>silence {gap_end - gap_start:.1f} s</title></rect>'
                         f'<text x="{(x0 + x1) / 2:.1f}" y="{height - 4}" font-size="10" fill="#777" '
                         f'text-anchor="middle">{gap_end - gap_start:.1f} s</text>')
    events = response_events(pl.LazyFrame({name: [voice[name]] for name in ("segments_json", "call_s", "tick_s")},
                                          schema={"segments_json": pl.String, "call_s": pl.Float64,
                                                  "tick_s": pl.Float64})).collect()
    for end_of_turn, answer in events.select("turn_end", "answer").iter_rows():
        if answer is not None:
            x = _x((end_of_turn + answer) / 2, start, span)
            parts.append(f'<text class="latency-label" x="{x:.1f}" y="{TOP - 6}" font-size="10" fill="#2b55b0" '
                         f'text-anchor="middle">{answer - end_of_turn:.1f} s</text>')
    trailing = voice.get("trailing_silence_s") or 0
    after = (f" · then {trailing:.1f} s of dead air to the {voice.get('call_end') or 'end'}"
             if trailing > LONG_SILENCE_S else "")
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


def voice_section(row: dict | None, audio: str | None = None) -> str:
    """A scenario's voice: the facts, the recording (``audio``: its address, where the viewer can
    serve it) above the timeline it drives, what each side heard of the other's turns."""
    if row is None:
        return ""
    facts = [("overlap", row["overlap_s"], "s"), ("longest silence", row["longest_silence_s"], "s"),
             ("dead air", row["dead_air_s"], "s"), ("the call ended", row["call_end"], ""),
             ("barge-ins agent / user", None if row["agent_barge_ins"] is None
              else f"{row['agent_barge_ins']} / {row['user_barge_ins']}", ""),
             ("response latency", row["response_latency_s"], "s"), ("missed user turns", row["missed_user_turns"], ""),
             ("user turns never heard", row["user_to_agent_turns_missing"], ""),
             ("WER user → agent", None if row["user_to_agent_wer"] is None else row["user_to_agent_wer"] * 100, "%"),
             ("WER agent → user", None if row["agent_to_user_wer"] is None else row["agent_to_user_wer"] * 100, "%")]
    shown = " · ".join(f"{name} <b>{value:.1f}{unit}</b>" if isinstance(value, float) else f"{name} <b>{value}</b>"
                       for name, value, unit in facts if value is not None)
    parts = [f'<h2 id="voice">Voice</h2><p class="note">{shown}</p>']
    misheard = json.loads(row["misheard_json"]) if row["misheard_json"] else []
    if misheard:
        parts.append("<p id=\"misheard\">misheard: " + ", ".join(
            f"<b>{esc(m['entity'])}</b> heard as <b>{esc(m['heard'] or '')}</b>" for m in misheard) + "</p>")
    if audio:
        parts.append(f'<audio id="recording" controls preload="metadata" src="{esc(audio)}"></audio>')
    if row["segments_json"]:
        parts.append(timeline_svg(row))
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


def _rate(value: float | None, events: int | None) -> str:
    if value is None:
        return ""
    return "—" if (events or 0) < 10 else f"{value * 100:.1f}%"


def voice_page(run: str, panel: pl.DataFrame, scenarios: pl.DataFrame, policy: str) -> str:
    """A run's voice: the panel per domain, then its failed scenarios by cause, each linked."""
    back = link(f"/runs/{segment(run)}", policy=policy)
    head = f'<p><a href="{back}">back to {esc(run)}</a></p><h1>{esc(run)}: voice</h1>'
    if panel.is_empty():
        return f"{head}<p id=\"no-voice\">This run records no speech to measure.</p>"
    def cell(value: object, shown: str) -> str:
        return f"<td class=num>{'' if value is None else shown}</td>"

    def domain_row(r: dict) -> str:
        causes = " ".join(f"{c}={r['failed_' + c]}" for c in CAUSE_NAMES if r["failed_" + c])
        return (f"<tr><td>{esc(r['domain'])}</td><td class=num>{r['scenarios']}</td>"
                + cell(r["agent_talk_ratio"], f"{(r['agent_talk_ratio'] or 0) * 100:.1f}%")
                + cell(r["overlap_s"], f"{r['overlap_s'] or 0:.2f}") + cell(r["agent_barge_ins"], r["agent_barge_ins"])
                + f"<td class=num>{_rate(r['response_rate'], r['user_turns'])}</td>"
                + cell(r["missed_user_turns"], r["missed_user_turns"])
                + f"<td class=num>{_rate(r['user_to_agent_wer'], r['user_to_agent_words'])}</td>"
                + f"<td class=num>{_rate(r['agent_to_user_wer'], r['agent_to_user_words'])}</td>"
                + f"<td>{esc(causes)}</td></tr>")

    rows = "".join(domain_row(r) for r in panel.iter_rows(named=True))
    failed = scenarios.filter(pl.col("failure_cause").is_not_null())
    listed = "".join(
        f'<tr><td><a href="{scenario_link(run, r["scenario_name"], policy)}#voice">'
        f'{esc(r["scenario_name"])}</a></td><td>{esc(r["failure_cause"])}</td><td>{esc(r["failure_evidence"])}</td></tr>'
        for r in failed.sort("failure_cause", "scenario_name").iter_rows(named=True))
    return (f"{head}<table id=\"voice-panel\"><tr><th>domain</th><th>scenarios</th><th>agent talk</th>"
            "<th>overlap s a scenario</th><th>agent barge-ins</th><th>response rate</th><th>missed turns</th>"
            "<th>WER user → agent</th><th>WER agent → user</th><th>failed by cause</th></tr>"
            f"{rows}</table><p class=\"note\">—: fewer than 10 events behind the rate.</p>"
            f"<h2>Failed scenarios by cause (policy {esc(policy)})</h2><table id=\"causes\"><tr><th>scenario</th>"
            f"<th>cause</th><th>evidence</th></tr>{listed}</table>")
