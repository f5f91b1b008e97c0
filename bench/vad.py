"""Which speech-activity detector the audio measures use, by measurement (docs/guide/voice.md).

One conversation of the conformance corpus (qa__telephone_inventor) spoken by espeak-ng at its
logged times, written clean, with its speech at -45 dBFS, and at -20 and -25 dBFS under -35 dBFS
white noise and at -30 dBFS under -40 dBFS; each read by each detector, each channel's talk (seconds
of speech, the pauses under 300 ms joined, clicks under 100 ms dropped) set against the same
detector's on the clean recording. Detectors: WebRTC's VAD in each of its four modes (the pipeline's
reading, ``transforms/voice/_audio.py``, with ``VAD_MODE`` set), a threshold over each channel's
noise floor (12 or 6 dB over the level 10% of its frames stay under, at least -70 dBFS), and the
former fixed -40 dBFS threshold.

    python bench/vad.py [-o bench/vad.json]

Needs Debian's espeak-ng and numpy (the test extras).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from scorelake.transforms.voice import _audio
from tests.conftest import BASELINE, CONFORMANCE
from tests.test_voice import INVENTOR, speak_into_wav

CONDITIONS = {"clean": {}, "speech -45 dBFS": {"speech_dbfs": -45.0},
              "speech -20 dBFS, noise -35 dBFS": {"speech_dbfs": -20.0, "noise_dbfs": -35.0},
              "speech -25 dBFS, noise -35 dBFS": {"speech_dbfs": -25.0, "noise_dbfs": -35.0},
              "speech -30 dBFS, noise -40 dBFS": {"speech_dbfs": -30.0, "noise_dbfs": -40.0}}


def _webrtc(mode: int):
    def talk(path: str) -> dict[str, float]:
        _audio.VAD_MODE = mode
        frames = _audio._frames(path)
        return {c: sum(e - s for s, e in _audio._stretches(frames.voiced[c])) for c in _audio.CHANNELS}
    return talk


def _threshold(over_floor_db: float | None, fixed_dbfs: float | None = None):
    def talk(path: str) -> dict[str, float]:
        frames = _audio._frames(path)
        found = {}
        for c in _audio.CHANNELS:
            ranked = sorted(frames.levels[c])
            floor = ranked[int(0.1 * (len(ranked) - 1))]
            at = fixed_dbfs if fixed_dbfs is not None else max(floor + over_floor_db, -70.0)
            found[c] = sum(e - s for s, e in _audio._stretches([level >= at for level in frames.levels[c]]))
        return found
    return talk


DETECTORS = {**{f"webrtc mode {m}": _webrtc(m) for m in range(4)},
             "noise floor + 12 dB": _threshold(12.0), "noise floor + 6 dB": _threshold(6.0),
             "fixed -40 dBFS (former)": _threshold(None, -40.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    logged = json.loads((CONFORMANCE / BASELINE / INVENTOR / "conversation_log.seglst.json").read_text())
    folder = Path(tempfile.mkdtemp())
    files = {}
    for name, options in CONDITIONS.items():
        files[name] = folder / f"{len(files)}.wav"
        speak_into_wav(logged, files[name], 0.25, **options)
    results = {}
    mode = _audio.VAD_MODE
    for detector, talk in DETECTORS.items():
        clean = talk(str(files["clean"]))
        rows = {}
        for name, path in files.items():
            heard = talk(str(path))
            rows[name] = {c: {"talk_s": round(heard[c], 2),
                              "off_clean": None if not clean[c] else round(heard[c] / clean[c] - 1, 3)}
                          for c in _audio.CHANNELS}
        offs = [abs(r[c]["off_clean"]) for n, r in rows.items() if n != "clean" for c in _audio.CHANNELS
                if r[c]["off_clean"] is not None]
        results[detector] = {"conditions": rows, "mean_abs_off_clean": round(sum(offs) / len(offs), 3),
                             "max_abs_off_clean": round(max(offs), 3)}
        print(f"{detector:26} mean |off| {results[detector]['mean_abs_off_clean']:.1%}  "
              f"max {results[detector]['max_abs_off_clean']:.1%}")
    _audio.VAD_MODE = mode
    if args.output:
        args.output.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
