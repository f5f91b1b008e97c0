"""Turn-taking from a conversation's speech segments (``conversation_log.seglst.json``): who spoke
when, as pure functions of the segments. A speaker's speech is the union of its segments'
``[start, end]`` intervals.

tau2's interaction metrics (``docs/interaction-metrics.md``) are defined on 200 ms ticks with the
user simulator's turn-taking decisions; here they are adapted to segments (README, "Voice"): every
user segment is a user turn, a segment starting strictly inside the other speaker's segment is an
interruption, and there are no backchannels, vocal tics or non-directed speech to tell apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

YIELD_WINDOW_S = 2.0  # tau2's no_yield_window_sec: an agent still talking 2 s into an interruption did not yield
AGENT, USER = "agent", "user"


@dataclass(frozen=True)
class Segment:
    speaker: str
    start: float
    end: float
    words: str = ""


def _time(t: Any) -> bool:
    """A time a segment can hold: a finite number of seconds, no bool, within a billion."""
    return ((type(t) is float or type(t) is int or (isinstance(t, (int, float)) and not isinstance(t, bool)))
            and -1e9 < t < 1e9)  # NaN and infinities compare false


def segments_of(doc: Any) -> list[Segment] | None:
    """The segments of a parsed ``conversation_log.seglst.json`` (None when it holds none that can
    be read: not a list, or no segment of the agent or user with a start and end in order)."""
    if not isinstance(doc, list):
        return None
    found = []
    for item in doc:
        if not isinstance(item, dict) or (speaker := item.get("speaker")) not in (AGENT, USER):
            continue
        start, end = item.get("start_time"), item.get("end_time")
        if not (_time(start) and _time(end)) or end < start:
            continue
        words = item.get("words")
        found.append(Segment(speaker, float(start), float(end), words if isinstance(words, str) else str(words or "")))
    return sorted(found, key=lambda s: (s.start, s.end)) or None


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


def _length(intervals: list[tuple[float, float]]) -> float:
    return sum(e - s for s, e in intervals)


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


def _inside(t: float, segments: list[Segment]) -> Segment | None:
    """The first segment (of segments in order of start) ``t`` lies strictly inside
    (``start < t < end``), if any."""
    for s in segments:
        if s.start >= t:  # every later one starts later still
            return None
        if t < s.end:
            return s
    return None


def _speaking_at(t: float, segments: list[Segment]) -> bool:
    """Whether one of the segments (in order of start) covers ``t`` (``start <= t < end``)."""
    for s in segments:
        if s.start > t:
            return False
        if t < s.end:
            return True
    return False


def _in_order(segments: list[Segment]) -> list[Segment]:
    return sorted(segments, key=lambda s: (s.start, s.end))  # as segments_of gives them: no work then


def response_events(segments: list[Segment]) -> list[tuple[float, float | None]]:
    """tau2's response events adapted to segments: each user turn that ended with the agent silent
    (and no other user speech going on), as (its end, the start of the agent's answer), the answer
    None when the user spoke again first."""
    segments = _in_order(segments)
    agent = [s for s in segments if s.speaker == AGENT]
    user = [s for s in segments if s.speaker == USER]
    events = []
    for turn in user:
        if _speaking_at(turn.end, agent) or _inside(turn.end, user):
            continue  # the agent talks at its end, or the user's speech goes on: no turn to answer yet
        answer = next((s.start for s in agent if s.start >= turn.end), None)
        next_user = next((s.start for s in user if s.start > turn.end), None)
        events.append((turn.end, answer if answer is not None and (next_user is None or answer < next_user)
                       else None))
    return events


def turn_taking(segments: list[Segment], word_count) -> dict[str, Any]:
    """The per-scenario turn-taking facts (``VOICE_COLUMNS`` names) of a conversation's segments;
    ``word_count(text)`` counts words."""
    segments = _in_order(segments)
    agent = [s for s in segments if s.speaker == AGENT]
    user = [s for s in segments if s.speaker == USER]
    agent_speech = union((s.start, s.end) for s in agent)
    user_speech = union((s.start, s.end) for s in user)
    anyone = union([*agent_speech, *user_speech])
    gaps = [b[0] - a[1] for a, b in pairwise(anyone)]
    agent_talk, user_talk = _length(agent_speech), _length(user_speech)

    events = response_events(segments)
    responses = [answer - end for end, answer in events if answer is not None]
    missed = len(events) - len(responses)
    yields, no_yields = [], 0  # yield events: the user starting while the agent speaks
    for turn in user:
        talking = _inside(turn.start, agent)
        if talking is None:
            continue
        if talking.end - turn.start <= YIELD_WINDOW_S:
            yields.append(talking.end - turn.start)
        else:
            no_yields += 1
    agent_barge_ins = sum(1 for s in agent if _inside(s.start, user))
    user_barge_ins = sum(1 for s in user if _inside(s.start, agent))
    turns = len(responses) + missed
    agent_words = word_count(" ".join(s.words for s in agent))
    return {
        "agent_talk_s": agent_talk,
        "user_talk_s": user_talk,
        "overlap_s": _length(intersection(agent_speech, user_speech)),
        "silence_s": sum(gaps),
        "longest_silence_s": max(gaps, default=0.0),
        "agent_talk_ratio": agent_talk / (agent_talk + user_talk) if agent_talk + user_talk > 0 else None,
        "agent_barge_ins": agent_barge_ins,
        "user_barge_ins": user_barge_ins,
        "agent_words": agent_words,
        "agent_wpm": agent_words / (agent_talk / 60) if agent_talk > 0 else None,
        "user_turns": turns,
        "responses": len(responses),
        "response_latency_s": sum(responses) / len(responses) if responses else None,
        "response_rate": len(responses) / turns if turns else None,
        "missed_user_turns": missed,
        "interruptions": len(yields) + no_yields,
        "yields": len(yields),
        "yield_latency_s": sum(yields) / len(yields) if yields else None,
        "yield_rate": len(yields) / (len(yields) + no_yields) if yields or no_yields else None,
        "agent_interruption_rate": agent_barge_ins / turns if turns else None,
    }
