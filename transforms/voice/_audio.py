"""Speech measured from the audio (``conversation_log.wav``: stereo 16-bit PCM, left the user's
speech as the agent received it, right the agent's as the user received it), against the times the
conversation log gives.

Speech activity is energy based: a channel is speaking in a 20 ms frame whose RMS is at least
-40 dBFS (1% of full scale: room noise and codec hiss stay under it, speech from a TTS or a phone
line is well above); speaking frames closer than 300 ms apart are one stretch (the pauses between
words), and a stretch shorter than 100 ms is a click, not speech. Frames are measured in Polars
over the samples as Arrow views them (no copy, no Python loop over samples).
"""

from __future__ import annotations

import wave
from itertools import pairwise
from typing import Any

import polars as pl

from scorelake.transforms.voice._speech import AGENT, USER, Segment, intersection, union

FRAME_S = 0.02
THRESHOLD_DBFS = -40.0
BRIDGE_S = 0.3
MIN_SPEECH_S = 0.1
CHANNELS = (USER, AGENT)  # left, right
MAX_AUDIO_BYTES = 512 * 1024 * 1024  # about 2 hours of 16 kHz stereo: a larger file is not measured


class AudioUnreadable(Exception):
    pass


def _samples(path: str) -> tuple[pl.DataFrame, int]:
    """The file's samples as a frame of one Int16 column per channel, and its sample rate."""
    import pyarrow as pa

    try:
        with wave.open(path, "rb") as audio:
            if audio.getsampwidth() != 2 or audio.getnchannels() != 2:
                raise AudioUnreadable(f"{audio.getnchannels()} channel(s) of {8 * audio.getsampwidth()} bits: "
                                      "stereo 16-bit PCM expected")
            if audio.getnframes() * 4 > MAX_AUDIO_BYTES:
                raise AudioUnreadable(f"{audio.getnframes() * 4:,} bytes of samples: over {MAX_AUDIO_BYTES:,}")
            rate, data = audio.getframerate(), audio.readframes(audio.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise AudioUnreadable(str(exc) or type(exc).__name__) from None
    interleaved = pl.from_arrow(pa.Array.from_buffers(pa.int16(), len(data) // 2, [None, pa.py_buffer(data)]))
    return pl.DataFrame({USER: interleaved.gather_every(2), AGENT: interleaved.gather_every(2, offset=1)}), rate


def speech_activity(path: str) -> tuple[dict[str, list[tuple[float, float]]], float]:
    """Per channel, the stretches of speech (seconds from the file's start), and the file's length."""
    samples, rate = _samples(path)
    frame = max(int(rate * FRAME_S), 1)
    threshold = (10 ** (THRESHOLD_DBFS / 20) * 32768) ** 2 * frame  # a frame's sum of squares at the threshold
    # each whole frame's sum of squares: the running sum at its last sample, less the one before it
    running = samples.select(pl.col(c).cast(pl.Int64).pow(2).cum_sum() for c in CHANNELS)
    energy = (running.gather_every(frame, offset=frame - 1)
              .select(pl.col(c).diff().fill_null(pl.col(c).first()) for c in CHANNELS).with_row_index("i"))
    found = {}
    for channel in CHANNELS:
        stretches: list[list[float]] = []
        for index in energy.filter(pl.col(channel) >= threshold)["i"].to_list():
            start, end = index * frame / rate, (index + 1) * frame / rate
            if stretches and start - stretches[-1][1] <= BRIDGE_S:
                stretches[-1][1] = end
            else:
                stretches.append([start, end])
        found[channel] = [(s, e) for s, e in stretches if e - s >= MIN_SPEECH_S]
    return found, samples.height / rate


def audio_facts(path: str, segments: list[Segment] | None) -> dict[str, Any]:
    """The audio columns of a scenario's ``voice`` row: speech per channel, overlap and silence as the
    audio has them, the time to its first speech (the agent's, and anyone's), and the drift of the
    logged segment times from the audio (the median of each logged segment's start minus the start of
    the audio stretch of its speaker nearest to it)."""
    speech, length = speech_activity(path)
    agent, user = union(speech[AGENT]), union(speech[USER])
    anyone = union([*agent, *user])
    both = sum(e - s for s, e in intersection(agent, user))
    drifts = sorted(s.start - min((begin for begin, _ in speech[s.speaker]), key=lambda begin: abs(begin - s.start))
                    for s in segments or () if speech.get(s.speaker))
    middle = len(drifts) // 2
    return {
        "audio_s": length,
        "audio_agent_talk_s": sum(e - s for s, e in agent),
        "audio_user_talk_s": sum(e - s for s, e in user),
        "audio_overlap_s": both,
        "audio_silence_s": sum(b[0] - a[1] for a, b in pairwise(anyone)),
        "audio_first_speech_s": anyone[0][0] if anyone else None,
        "audio_first_agent_s": agent[0][0] if agent else None,
        "audio_drift_s": None if not drifts else (drifts[middle] if len(drifts) % 2
                                                   else (drifts[middle - 1] + drifts[middle]) / 2),
    }
