"""Speech measured from the audio (``conversation_log.wav``: stereo, left the user's speech as the
agent received it, right the agent's as the user received it), against the times the conversation
log gives.

Read through libsndfile (soundfile): any PCM or float WAV, a WAVE_FORMAT_EXTENSIBLE header
included, 8 to 96 kHz, in blocks (a long call costs its frames' energies, not its samples).

Speech activity from WebRTC's voice activity detector (webrtcvad, mode 2) over 20 ms frames of
each channel, as 16-bit samples at 8, 16, 32 or 48 kHz (another rate resampled to 16 kHz, the
nearest sample); speaking frames closer than 300 ms apart are one stretch (the pauses between
words), and a stretch shorter than 100 ms is a click, not speech. Chosen by measurement
(bench/vad.py: espeak-ng speech clean, at -45 dBFS, and under -35 and -40 dBFS white noise): mode 2
kept each channel's talk within 2.8% of the clean recording's on average (5.1% at most), mode 3
4.5% (12.6%), a threshold 6 dB over the channel's noise floor 7.7% (11.7%), the former fixed
-40 dBFS threshold 275% off (quiet speech heard as none, noise as one long speech). A channel whose
loudest frames do not rise 12 dB over its noise floor (the level 10% of its frames stay under)
cannot be told from noise, and a recording with no speech at all is measured as nothing: both a
warning, not numbers.

Drift: the starts of the logged speech, each speaker's against its channel's, shifted by every
20 ms from -10 s to +10 s; the shift where they land closest on the audio's starts of speech is the
drift (sign: logged minus audio, negative when the log runs early), and the share of logged starts
that land within 0.1 s of one is its confidence.
"""

from __future__ import annotations

import bisect
import os
from itertools import pairwise
from typing import Any, NamedTuple

import polars as pl

from scorelake.transforms.voice._speech import AGENT, USER, Segment, intersection, union

FRAME_S = 0.02
VAD_MODE = 2  # the steadiest of WebRTC's four across quiet, clean and noisy speech (bench/vad.py)
VAD_RATES = (8000, 16000, 32000, 48000)
FLOOR_QUANTILE = 0.1  # a channel's noise floor: the level this share of its frames stay under
OVER_FLOOR_DB = 12.0  # a channel whose loudest frames do not rise this far over its floor is noise
MIN_SPEECH_DBFS = -70.0  # a channel whose loudest frames stay under this is silent
BRIDGE_S = 0.3
MIN_SPEECH_S = 0.1
DRIFT_RANGE_S = 10.0  # the drift is sought within this much either way
ONSET_S = 0.2  # a logged start this close to an audio start lands on it
CHANNELS = (USER, AGENT)  # left, right
RATES = (8000, 96000)  # the sample rates measured, in Hz
# Frames read at once: ten seconds of audio. A minute a block left Polars' allocator holding 65-97 MB
# more for a 27-minute call than a 3-minute one, by how fast the blocks came (the test of it failed now
# and then under load); ten seconds, 10-16 MB, and half the peak, at the same CPU.
BLOCK_FRAMES = 500
MAX_AUDIO_BYTES = 512 * 1024 * 1024  # a larger file is not measured


class AudioUnreadable(Exception):
    pass


class _Channels(NamedTuple):
    """What a recording's frames hold, per channel: each 20 ms frame's level (dBFS, RMS against full
    scale; digital silence -inf) and whether WebRTC's VAD hears speech in it."""
    levels: dict[str, list[float]]
    voiced: dict[str, list[bool]]
    length_s: float


def _frames(path: str) -> _Channels:
    """Read a block at a time: a long call costs its frames, not its samples."""
    import pyarrow as pa
    import soundfile
    import webrtcvad

    try:
        if os.path.getsize(path) > MAX_AUDIO_BYTES:
            raise AudioUnreadable(f"{os.path.getsize(path):,} bytes: over {MAX_AUDIO_BYTES:,}")
        with soundfile.SoundFile(path) as audio:
            if audio.channels != 2:
                raise AudioUnreadable(f"{audio.channels} channel(s): stereo expected (left the user, right the agent)")
            if not RATES[0] <= audio.samplerate <= RATES[1]:
                raise AudioUnreadable(f"a sample rate of {audio.samplerate} Hz: {RATES[0]}-{RATES[1]} Hz expected")
            rate, frame = audio.samplerate, int(audio.samplerate * FRAME_S)
            heard_rate = rate if rate in VAD_RATES else 16000  # WebRTC's VAD hears these rates only
            heard_frame = int(heard_rate * FRAME_S)
            vads = {c: webrtcvad.Vad(VAD_MODE) for c in CHANNELS}  # one each: a VAD keeps state from frame to frame
            found = _Channels({c: [] for c in CHANNELS}, {c: [] for c in CHANNELS}, 0.0)
            samples = 0
            while data := audio.buffer_read(frame * BLOCK_FRAMES, dtype="float32"):
                values = pl.from_arrow(pa.Array.from_buffers(pa.float32(), len(data) // 4, [None, pa.py_buffer(data)]))
                samples += len(values) // 2
                frames = len(values) // 2 // frame  # a last part frame is no frame
                block = pl.DataFrame({c: values.gather_every(2, offset=i)[:frames * frame]
                                      for i, c in enumerate(CHANNELS)})
                energy = (block.with_columns(pl.all().cast(pl.Float64).pow(2))
                          .group_by((pl.int_range(pl.len()) // frame).alias("_frame"), maintain_order=True).mean())
                # as 16-bit samples at a rate the VAD hears (the nearest sample where it is resampled)
                at = pl.int_range(frames * heard_frame, eager=True) * rate // heard_rate
                heard = block[at].select((pl.all() * 32767).round().clip(-32768, 32767).cast(pl.Int16))
                for c in CHANNELS:
                    found.levels[c].extend(energy.select(pl.col(c).log10() * 10)[c].to_list())
                    pcm = heard[c].to_arrow().buffers()[1].to_pybytes()
                    step = 2 * heard_frame
                    found.voiced[c].extend(vads[c].is_speech(pcm[i:i + step], heard_rate)
                                           for i in range(0, len(pcm), step))
    except soundfile.LibsndfileError as exc:  # its own words, not the path (the warning names the file)
        raise AudioUnreadable(f"libsndfile cannot read it ({exc.error_string.strip()})") from None
    except (OSError, RuntimeError) as exc:
        raise AudioUnreadable(str(exc) or type(exc).__name__) from None
    return found._replace(length_s=samples / rate)


def _stretches(voiced: list[bool]) -> list[tuple[float, float]]:
    """The voiced frames as stretches of seconds, close ones joined, clicks dropped."""
    stretches: list[list[float]] = []
    for index, speaks in enumerate(voiced):
        if not speaks:
            continue
        start, end = index * FRAME_S, (index + 1) * FRAME_S
        if stretches and start - stretches[-1][1] <= BRIDGE_S:
            stretches[-1][1] = end
        else:
            stretches.append([start, end])
    return [(s, e) for s, e in stretches if e - s >= MIN_SPEECH_S]


def speech_activity(path: str) -> tuple[dict[str, list[tuple[float, float]]], float]:
    """Per channel, the stretches of speech (seconds from the file's start), and the file's length.
    ``AudioUnreadable`` where a channel's speech cannot be told from its noise, or nobody speaks."""
    frames = _frames(path)
    found = {}
    for channel in CHANNELS:
        ranked = sorted(frames.levels[channel])
        if not ranked:
            raise AudioUnreadable("shorter than one 20 ms frame")
        floor = ranked[int(FLOOR_QUANTILE * (len(ranked) - 1))]
        loudest = ranked[int(0.99 * (len(ranked) - 1))]
        if loudest >= MIN_SPEECH_DBFS and loudest < floor + OVER_FLOOR_DB:
            raise AudioUnreadable(f"the {channel}'s channel (noise floor {floor:.1f} dBFS) never rises "
                                  f"{OVER_FLOOR_DB:.0f} dB over its noise: its speech cannot be told from it")
        found[channel] = _stretches(frames.voiced[channel]) if loudest >= MIN_SPEECH_DBFS else []
    if not found[USER] and not found[AGENT]:
        raise AudioUnreadable("no speech on either channel")
    return found, frames.length_s


def drift(speech: dict[str, list[tuple[float, float]]], segments: list[Segment]) -> tuple[float, float] | None:
    """(drift, confidence) of the logged segments against the audio's speech: the shift of the log,
    on a 20 ms grid within ``DRIFT_RANGE_S``, that lands the starts of its speech (each speaker's) on
    the starts of its channel's audio speech, each pair scored by how close it lands (full at 0,
    nothing from ``ONSET_S`` on), the shift nearest to none among the best; as logged minus audio,
    and the share of the logged starts that land within half of ``ONSET_S`` of one. Starts, not
    whole stretches: a logged segment is longer than the speech in it, and an overlap of stretches
    is as large for every shift that keeps the speech inside. None without logged speech."""
    steps = round(DRIFT_RANGE_S / FRAME_S)
    score = [0.0] * (2 * steps + 1)  # per shift of the audio after the log (index - steps frames)
    pairs: list[tuple[float, list[float]]] = []  # each logged start, and its channel's audio starts
    for channel in CHANNELS:
        heard = [s for s, _ in speech[channel]]
        for start, _ in union((s.start, s.end) for s in segments if s.speaker == channel):
            pairs.append((start, heard))
            near = heard[bisect.bisect_left(heard, start - DRIFT_RANGE_S - ONSET_S):
                         bisect.bisect_right(heard, start + DRIFT_RANGE_S + ONSET_S)]
            for onset in near:
                gap = onset - start
                low, high = max(-steps, int((gap - ONSET_S) / FRAME_S)), min(steps, int((gap + ONSET_S) / FRAME_S))
                for k in range(low, high + 1):
                    score[k + steps] += max(0.0, 1 - abs(k * FRAME_S - gap) / ONSET_S)
    if not pairs:
        return None
    best = max(score)
    k = min((i - steps for i, v in enumerate(score) if v == best), key=abs)
    shift = k * FRAME_S
    landed = sum(any(abs(onset - start - shift) <= ONSET_S / 2 for onset in heard[
        bisect.bisect_left(heard, start + shift - ONSET_S):bisect.bisect_right(heard, start + shift + ONSET_S)])
                 for start, heard in pairs)
    return -shift + 0.0, landed / len(pairs)


def audio_facts(path: str, segments: list[Segment] | None) -> dict[str, Any]:
    """The audio columns of a scenario's ``voice`` row: speech per channel, overlap and silence as the
    audio has them, the time to its first speech (the agent's, and anyone's), and the drift of the
    logged segment times from the audio, with its confidence."""
    speech, length = speech_activity(path)
    agent, user = union(speech[AGENT]), union(speech[USER])
    anyone = union([*agent, *user])
    found = drift(speech, segments or [])
    return {
        "audio_s": length,
        "audio_agent_talk_s": sum(e - s for s, e in agent),
        "audio_user_talk_s": sum(e - s for s, e in user),
        "audio_overlap_s": sum(e - s for s, e in intersection(agent, user)),
        "audio_silence_s": sum(b[0] - a[1] for a, b in pairwise(anyone)),
        "audio_first_speech_s": anyone[0][0] if anyone else None,
        "audio_first_agent_s": agent[0][0] if agent else None,
        "audio_drift_s": None if found is None else found[0],
        "audio_drift_confidence": None if found is None else found[1],
    }
