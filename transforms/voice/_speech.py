"""A conversation's speech segments (``conversation_log.seglst.json``, or τ-voice's ticks made
segments): who spoke when, checked and in order, and the interval helpers the audio and the viewer's
timeline draw with. Turn-taking is measured from the segments of many conversations at once, in
``_turns``.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any, NamedTuple

AGENT, USER = "agent", "user"


class Segment(NamedTuple):  # a tuple: made for every segment of every scenario an ingest reads
    speaker: str
    start: float
    end: float
    words: str = ""


def _time(t: Any) -> bool:
    """A time a segment can hold: a finite number of seconds, no bool, within a billion."""
    return ((type(t) is float or type(t) is int or (isinstance(t, (int, float)) and not isinstance(t, bool)))
            and -1e9 < t < 1e9)  # NaN and infinities compare false


_START_END = itemgetter(1, 2)  # a segment's start, then its end


def segments_of(doc: Any) -> list[Segment] | None:
    """The segments of a parsed ``conversation_log.seglst.json`` (None when it holds none that can
    be read: not a list, or no segment of the agent or user with a start and end in order)."""
    if not isinstance(doc, list):
        return None
    found = []
    for item in doc:
        if type(item) is not dict or (speaker := item.get("speaker")) not in (AGENT, USER):
            continue
        start, end = item.get("start_time"), item.get("end_time")
        if not (_time(start) and _time(end)) or end < start:
            continue
        words = item.get("words")
        found.append(Segment(speaker, float(start), float(end), words if type(words) is str else str(words or "")))
    found.sort(key=_START_END)
    return found or None


TICK_S = 0.2  # tau2's default tick, where a tick does not say its own


def tick_segments(ticks: Any) -> list[dict] | None:
    """τ-voice (tau2 full-duplex) ticks as conversation segments, in ``conversation_log.seglst.json``'s
    shape: contiguous ticks whose agent (or user) chunk ``contains_speech`` are one segment of that
    speaker, from its first tick's start to its last tick's end, its words the chunks' contents.
    As tau2's ``filter_end_of_conversation_ticks``, a last tick of user speech after a tick without
    any is the stop signal's, not speech, and is left out. None when there are no ticks."""
    if not isinstance(ticks, list) or not ticks:
        return None
    ticks = [t for t in ticks if isinstance(t, dict)]

    def speaks(tick: dict, role: str) -> bool:
        chunk = tick.get(f"{role}_chunk")
        return isinstance(chunk, dict) and chunk.get("contains_speech") is True

    if len(ticks) > 1 and speaks(ticks[-1], USER) and not speaks(ticks[-2], USER):
        ticks = ticks[:-1]
    segments, open_ = [], {}
    at = 0.0
    for tick in ticks:
        duration = tick.get("tick_duration_seconds")
        duration = duration if isinstance(duration, (int, float)) and 0 < duration < 60 else TICK_S
        for role in (AGENT, USER):
            if speaks(tick, role):
                content = tick[f"{role}_chunk"].get("content")
                current = open_.setdefault(role, {"speaker": role, "start_time": at, "words": []})
                current["end_time"] = at + duration
                if isinstance(content, str) and content.strip():
                    current["words"].append(content.strip())
            elif role in open_:
                segments.append(open_.pop(role))
        at += duration
    segments += open_.values()
    return sorted(({**s, "words": " ".join(s["words"])} for s in segments), key=lambda s: s["start_time"]) or None


def union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Overlapping or touching intervals merged, in order."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def intersection(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The stretches both unions cover (two ordered lists of disjoint intervals), in order."""
    both, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if high > low:
            both.append((low, high))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return both
