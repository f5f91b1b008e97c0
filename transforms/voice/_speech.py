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
    speaker: str  # AGENT, USER, or EFFECT (a vocal tic or non-directed speech outside the user's speech)
    start: float
    end: float
    words: str = ""
    kinds: str = ""  # what the source marks it as (TURN_KINDS, comma-separated): τ-voice's ticks only


EFFECT = "effect"
# What τ-voice marks a user's speech as, which tau2's selectivity metrics read: the user simulator's
# turn-taking action (a backchannel) and the speech inserted into it (a vocal tic, speech not
# directed at the agent). A NeMo seglst marks none of them.
BACKCHANNEL, VOCAL_TIC, NON_DIRECTED = "backchannel", "vocal_tic", "non_directed"
TURN_KINDS = (BACKCHANNEL, VOCAL_TIC, NON_DIRECTED)


def _time(t: Any) -> bool:
    """A time a segment can hold: a finite number of seconds, no bool, within a billion."""
    return ((type(t) is float or type(t) is int or (isinstance(t, (int, float)) and not isinstance(t, bool)))
            and -1e9 < t < 1e9)  # NaN and infinities compare false


_START_END = itemgetter(1, 2)  # a segment's start, then its end


LONG_SEGMENT_S = 60.0  # one segment longer than this is an anomaly: no turn of a call lasts a minute
# A conversation's segments measured at most: its turn-taking's memory grows with them (a 1 MB
# seglst, 16,000 segments, takes tens of MB); a seglst with more is not measured, and says so.
MAX_SEGMENTS = 50_000


class Segments(NamedTuple):
    """A seglst as read: its segments (None when it holds none) and what in it no measure should
    trust (each a sentence naming what and where)."""
    segments: list[Segment] | None
    anomalies: list[str]


def _not_a_segment(item: Any) -> str | None:
    """Why an item of a seglst is no segment, or None when it is one."""
    if type(item) is not dict:
        return f"a {type(item).__name__}, not an object"
    if (speaker := item.get("speaker")) not in (AGENT, USER):
        return f"speaker {speaker!r}, neither agent nor user"
    start, end = item.get("start_time"), item.get("end_time")
    if not (_time(start) and _time(end)):
        return f"times {start!r} to {end!r}, not finite seconds"
    return f"it ends ({end}) before it starts ({start})" if end < start else None


def segments_of(doc: Any) -> Segments:
    """The segments of a parsed ``conversation_log.seglst.json``, in order of start and end, and its
    anomalies: not a list, more than ``MAX_SEGMENTS`` items (then none is read), items that are no
    segment (each left out), segments out of order in the file, a segment longer than ``LONG_SEGMENT_S``."""
    if not isinstance(doc, list):
        return Segments(None, [] if doc is None else [f"not a list of segments (a {type(doc).__name__})"])
    if len(doc) > MAX_SEGMENTS:
        return Segments(None, [f"{len(doc):,} items: over the {MAX_SEGMENTS:,} segments a conversation is measured "
                               "with (not measured)"])
    found, anomalies, skipped = [], [], []
    for at, item in enumerate(doc):
        if (type(item) is not dict or item.get("speaker") not in (AGENT, USER)
                or not (_time(start := item.get("start_time")) and _time(end := item.get("end_time"))) or end < start):
            skipped.append((at, _not_a_segment(item)))  # why, worked out only for an item that is no segment
            continue
        words = item.get("words")
        found.append(Segment(item["speaker"], float(start), float(end),
                             words if type(words) is str else str(words or "")))
    if skipped:
        at, why = skipped[0]
        anomalies.append(f"{len(skipped)} of {len(doc)} items are no segment and were left out (item {at}: {why})")
    if any(b.start < a.start for a, b in zip(found, found[1:])):
        anomalies.append("segments out of order (sorted by their start)")
    for s in found:
        if s.end - s.start > LONG_SEGMENT_S:
            anomalies.append(f"a {s.speaker} segment of {s.end - s.start:.1f} s ({s.start:.1f}-{s.end:.1f} s), "
                             f"over the {LONG_SEGMENT_S:.0f} s bound")
    found.sort(key=_START_END)
    return Segments(found or None, anomalies)


TICK_S = 0.2  # tau2's tick (InteractionMetricsConfig.tick_duration_sec), where a run does not record its own


class TickedCall(NamedTuple):
    """A τ-voice simulation's ticks as segments: each speaker's contiguous speaking ticks one segment
    (tick ``i`` spans ``i * tick_s`` to ``(i + 1) * tick_s``), the user's marked with its TURN_KINDS,
    and the vocal tics and non-directed speech outside the user's speech as EFFECT segments."""
    segments: list[Segment]
    tick_s: float
    call_s: float  # the ticks' whole length


def _speaks(tick: dict, role: str) -> bool:
    chunk = tick.get(f"{role}_chunk")
    return isinstance(chunk, dict) and chunk.get("contains_speech") is True


def _inserts(chunk: Any) -> list[tuple[str, Any]]:
    """The speech a tick's user chunk has inserted, as tau2's ``_get_active_effects_from_chunk``
    reads it: (kind, text) of each vocal tic or non-directed phrase among its source and speech
    effects (an insert whose type is not ``vocal_tic`` is non-directed speech)."""
    found = []
    if not isinstance(chunk, dict):
        return found
    for effects in (chunk.get("source_effects"), chunk.get("speech_effects")):
        insert = effects.get("speech_insert") if isinstance(effects, dict) else None
        if isinstance(insert, dict):
            kind = VOCAL_TIC if insert.get("type", VOCAL_TIC) == VOCAL_TIC else NON_DIRECTED
            found.append((kind, insert.get("text")))
    return found


def _tick_s(ticks: list[dict], declared: Any) -> float:
    """The tick tau2 measures a run with: its audio config's, else the ticks' own, else tau2's default."""
    for value in (declared, ticks[0].get("tick_duration_seconds") if ticks else None):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 60:
            return float(value)
    return TICK_S


def tick_segments(ticks: Any, tick_s: Any = None) -> TickedCall | None:
    """τ-voice (tau2 full-duplex) ticks as segments, read as tau2's ``extract_all_segments`` and
    ``extract_out_of_turn_effects`` read them (src/tau2/metrics/voice_interaction_metrics.py): a
    user segment is a ``backchannel`` when its first tick's turn-taking action is, a ``vocal_tic`` or
    ``non_directed`` when any of its ticks inserts one; an insert in a tick without user speech is an
    EFFECT segment, consecutive ticks of the same insert one. As tau2's
    ``filter_end_of_conversation_ticks``, a last tick of user speech after a tick without any is the
    stop signal's, not speech, and is left out. ``tick_s``: the run's recorded tick. None when
    there is no segment at all."""
    if not isinstance(ticks, list) or not ticks:
        return None
    ticks = [t for t in ticks if isinstance(t, dict)]
    if len(ticks) > 1 and _speaks(ticks[-1], USER) and not _speaks(ticks[-2], USER):
        ticks = ticks[:-1]
    step = _tick_s(ticks, tick_s)
    segments: list[Segment] = []
    open_: dict[str, list] = {}  # speaker -> [first tick, kinds, words]
    effects: dict[tuple, int] = {}  # the inserts of the last tick without user speech -> their first tick

    def close(role: str, end: int) -> None:
        first, kinds, said = open_.pop(role)
        segments.append(Segment(role, first * step, end * step, " ".join(said), ",".join(k for k in TURN_KINDS
                                                                                          if k in kinds)))

    for i, tick in enumerate(ticks):
        for role in (AGENT, USER):
            if not _speaks(tick, role):
                if role in open_:
                    close(role, i)
                continue
            chunk = tick[f"{role}_chunk"]
            current = open_.get(role)
            if current is None:
                action = chunk.get("turn_taking_action") if role == USER else None
                current = open_[role] = [i, {BACKCHANNEL} if isinstance(action, dict)
                                         and action.get("action") == BACKCHANNEL else set(), []]
            if role == USER:
                current[1].update(kind for kind, _ in _inserts(chunk))
            content = chunk.get("content")
            if isinstance(content, str) and content.strip():
                current[2].append(content.strip())
        inserts = [] if _speaks(tick, USER) else _inserts(tick.get("user_chunk"))
        for insert, first in list(effects.items()):
            if insert not in inserts:  # ended with the tick before
                segments.append(Segment(EFFECT, first * step, i * step, "", insert[0]))
                del effects[insert]
        for insert in inserts:
            effects.setdefault(insert, i)
    for role in list(open_):
        close(role, len(ticks))
    segments += [Segment(EFFECT, first * step, len(ticks) * step, "", insert[0]) for insert, first in effects.items()]
    return TickedCall(sorted(segments, key=_START_END), step, len(ticks) * step) if segments else None


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
