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
    edit_distance,
    heard_facts,
    key_entities,
    misheard,
    words,
)
from scorelake.transforms.voice._speech import AGENT, Segment, intersection, segments_of, tick_segments, union
from scorelake.transforms.voice._turns import response_events, segment_frame, turn_taking


def voice_row(key: dict, seglst: Any, agent_context: Any, user_context: Any,
              entities: Callable[[], Sequence[str]], audio: str | None = None,
              unmeasured: Callable[[str], None] = lambda reason: None) -> dict | None:
    """A scenario's ``voice`` row (``key``: its run_id, generation and scenario_name), or None when it
    has no speech segments, LLM context or recording to measure. ``entities`` gives its key entities
    (asked only when the agent misheard something); ``audio``: the path of its recording, if any;
    ``unmeasured`` hears why a recording could not be measured (its columns are then NULL). Its
    turn-taking columns are left to ``turn_taking``, over the rows of many scenarios at once."""
    segments = segments_of(seglst)
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
    return {**key, "has_segments": segments is not None, **spoken_facts,
            **heard_facts(agent_context, user_context, entities),
            # the times whole: ``turn_taking`` measures from them
            "segments_json": None if segments is None else orjson.dumps(
                [[s.speaker, s.start, s.end, s.words] for s in segments]).decode()}


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
    "segment_frame",
    "segments_of",
    "speech_activity",
    "tick_segments",
    "turn_taking",
    "union",
    "voice_row",
    "words",
]
