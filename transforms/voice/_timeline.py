"""A scenario's speech timeline, measured: what a face draws of one conversation (the viewer maps
its seconds to pixels and does nothing else). From its stored ``voice`` row: the two speakers'
segments (one longer than ``LONG_SEGMENT_S`` clipped to it, its logged end kept), where both speak,
the silences longer than ``LONG_SILENCE_S``, tau2's response events on the row's ticks, and the dead
air after the last speech."""

from __future__ import annotations

import json
from itertools import pairwise

import polars as pl

from scorelake.transforms.results import Interval, SpeechTimeline, TimelineSegment, TimelineResponse
from scorelake.transforms.voice._speech import AGENT, LONG_SEGMENT_S, USER, intersection, union
from scorelake.transforms.voice._turns import response_events

LONG_SILENCE_S = 2.0  # a silence longer than this is marked on the timeline


def speech_timeline(voice: dict) -> SpeechTimeline | None:
    """The timeline of a ``voice`` row (``scenario_voice``'s columns), or None without segments."""
    logged = [s for s in json.loads(voice["segments_json"] or "[]") if s[0] in (AGENT, USER)]
    if not logged:
        return None
    segments = tuple(TimelineSegment(speaker, s0, min(s1, s0 + LONG_SEGMENT_S), s1, said)
                     for speaker, s0, s1, said, *_ in logged)
    agent = union((s.start, s.end) for s in segments if s.speaker == AGENT)
    user = union((s.start, s.end) for s in segments if s.speaker == USER)
    silences = tuple(Interval(gap_start, gap_end) for (_, gap_start), (gap_end, _) in pairwise(union([*agent, *user]))
                     if gap_end - gap_start > LONG_SILENCE_S)
    events = response_events(pl.LazyFrame({name: [voice[name]] for name in ("segments_json", "call_s", "tick_s")},
                                          schema={"segments_json": pl.String, "call_s": pl.Float64,
                                                  "tick_s": pl.Float64})).collect(engine="in-memory")
    responses = tuple(TimelineResponse(turn_end, answer)
                      for turn_end, answer in events.select("turn_end", "answer").iter_rows() if answer is not None)
    trailing = voice.get("trailing_silence_s") or 0.0
    return SpeechTimeline(
        start=min(s.start for s in segments), end=max(s.end for s in segments), segments=segments,
        overlaps=tuple(Interval(low, high) for low, high in intersection(agent, user)), long_silences=silences,
        responses=responses, dead_air_after_s=trailing if trailing > LONG_SILENCE_S else 0.0,
        call_end=voice.get("call_end"))
