"""The voice in voice agent: a conversation's speech segments (``_speech``) and what each side
heard (``_heard``), per scenario, as pure functions of the parsed files, and the turn-taking
measured from the segments of many scenarios at once (``_turns``). A source calls ``voice_row``
while it reads a scenario; the commit that stores its rows in the ``voice`` table measures their
turn-taking (``turn_taking``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from scorelake.transforms.voice._audio import AudioUnreadable, audio_facts, speech_activity
from scorelake.transforms.voice._heard import (
    CUES,
    TURN_FAULTS,
    Heard,
    heard_facts,
    heard_turns,
    key_entities,
    misheard,
    words,
)
from scorelake.transforms.voice._speech import (
    AGENT,
    EFFECT,
    TICK_S,
    LONG_SEGMENT_S,
    TURN_KINDS,
    USER,
    Segment,
    Segments,
    TickedCall,
    intersection,
    segments_of,
    tick_segments,
    union,
)
from scorelake.transforms.voice._timeline import LONG_SILENCE_S, speech_timeline
from scorelake.transforms.voice._turns import response_events, segment_frame, turn_taking


# How a call ended, from its source's stop reason (NeMo's metrics.json ``stop_reason``, tau2's
# ``termination_reason``): the caller or the agent hung up, it ran out of time, or it broke.
CALL_ENDS = {"[EXIT]": "exit", "user_stop": "exit", "agent_stop": "exit",
             "[TIMEOUT]": "timeout", "max_steps": "timeout", "timeout": "timeout"}


def call_end(stop_reason: Any) -> str | None:
    """``exit``, ``timeout`` or ``error`` (any other stop reason a source gives); None without one."""
    return CALL_ENDS.get(stop_reason, "error") if isinstance(stop_reason, str) and stop_reason else None


def voice_row(key: dict, segments: list[Segment] | None, agent_context: Any, user_context: Any,
              entities: Callable[[], Sequence[str]], audio: str | None = None,
              unmeasured: Callable[[str], None] = lambda reason: None, *, call_s: float | None = None,
              ended: str | None = None, tick_s: float = TICK_S, kinds_marked: bool = False,
              anomalies: Sequence[str] = ()) -> dict | None:
    """A scenario's ``voice`` row (``key``: its run_id, generation and scenario_name), or None when it
    has no speech segments, LLM context or recording to measure. ``entities`` gives its key entities
    (asked only when the agent misheard something); ``audio``: the path of its recording, if any;
    ``unmeasured`` hears why a recording could not be measured (its columns are then NULL);
    ``call_s`` and ``ended``: how long the call lasted (from its start, the segments' zero) and how it
    ended (``call_end``); ``tick_s``: the tick its turn-taking is measured on; ``kinds_marked``: the
    source marks backchannels, vocal tics and non-directed speech (τ-voice); ``anomalies``: what its
    segments hold that no measure should trust (``segments_of``), to which the row adds the caps its
    conversation met (``heard_facts``). Its turn-taking columns are left to ``turn_taking``, over
    the rows of many scenarios at once."""
    if (segments is None and audio is None and not isinstance(agent_context, list)
            and not isinstance(user_context, list)):
        return None
    spoken_facts = {} if segments is None else {
        "agent_words": len(words(" ".join(s.words for s in segments if s.speaker == AGENT)))}
    if audio is not None:
        try:
            spoken_facts |= audio_facts(audio, segments)
        except AudioUnreadable as err:
            unmeasured(str(err))
    anomalies = list(anomalies)
    heard = heard_facts(agent_context, user_context, entities, anomalies.append)
    return {**key, "has_segments": segments is not None, **spoken_facts,
            "call_s": call_s if call_s is not None and call_s > 0 else None, "call_end": ended, "tick_s": tick_s,
            "turn_kinds_marked": kinds_marked and segments is not None, "anomalies": anomalies or None, **heard,
            # the times whole: ``turn_taking`` measures from them
            "segments_json": None if segments is None else orjson.dumps(
                [[*s[:4], s.kinds] if s.kinds else [*s[:4]] for s in segments]).decode()}


__all__ = [
    "CUES",
    "Heard",
    "TURN_FAULTS",
    "AGENT",
    "LONG_SEGMENT_S",
    "LONG_SILENCE_S",
    "AudioUnreadable",
    "CALL_ENDS",
    "EFFECT",
    "TICK_S",
    "TURN_KINDS",
    "TickedCall",
    "USER",
    "Segment",
    "Segments",
    "audio_facts",
    "call_end",
    "heard_facts",
    "heard_turns",
    "intersection",
    "key_entities",
    "misheard",
    "response_events",
    "segment_frame",
    "segments_of",
    "speech_activity",
    "speech_timeline",
    "tick_segments",
    "turn_taking",
    "union",
    "voice_row",
    "words",
]
