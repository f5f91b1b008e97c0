"""The voice in voice agent: turn-taking from a conversation's speech segments (``_speech``) and
what each side heard (``_heard``), per scenario, as pure functions of the parsed files. A source
calls ``voice_row`` while it reads a scenario; the warehouse's ``voice`` table holds the result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from scorelake.transforms.voice._audio import AudioUnreadable, audio_facts, speech_activity
from scorelake.transforms.voice._heard import (
    CUES,
    edit_distance,
    heard_facts,
    key_entities,
    misheard,
    words,
)
from scorelake.transforms.voice._speech import (
    Segment,
    intersection,
    response_events,
    segments_of,
    tick_segments,
    turn_taking,
    union,
)


def voice_row(key: dict, seglst: Any, agent_context: Any, user_context: Any,
              entities: Callable[[], list[str]], audio: str | None = None,
              unmeasured: Callable[[str], None] = lambda reason: None) -> dict | None:
    """A scenario's ``voice`` row (``key``: its run_id, generation and scenario_name), or None when it
    has no speech segments, LLM context or recording to measure. ``entities`` gives its key entities
    (asked only when the agent misheard something); ``audio``: the path of its recording, if any;
    ``unmeasured`` hears why a recording could not be measured (its columns are then NULL)."""
    segments = segments_of(seglst)
    if (segments is None and audio is None and not isinstance(agent_context, list)
            and not isinstance(user_context, list)):
        return None
    spoken_facts = turn_taking(segments, lambda text: len(words(text))) if segments else {}
    if audio is not None:
        try:
            spoken_facts |= audio_facts(audio, segments)
        except AudioUnreadable as err:
            unmeasured(str(err))
    return {**key, "has_segments": segments is not None, **spoken_facts,
            **heard_facts(agent_context, user_context, entities),
            "segments_json": None if segments is None else orjson.dumps(
                [[s.speaker, round(s.start, 3), round(s.end, 3), s.words] for s in segments]).decode()}


__all__ = [
    "CUES",
    "AudioUnreadable",
    "Segment",
    "audio_facts",
    "edit_distance",
    "heard_facts",
    "intersection",
    "key_entities",
    "misheard",
    "response_events",
    "segments_of",
    "speech_activity",
    "tick_segments",
    "turn_taking",
    "union",
    "voice_row",
    "words",
]
