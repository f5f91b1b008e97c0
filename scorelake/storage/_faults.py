"""Crash points for the crash tests: with ``SCORELAKE_CRASH_AT=STEP:N`` set, this process kills
itself (SIGKILL, as a power cut or the OOM killer would) the Nth time it reaches ``STEP``: ``commit``
(just before a Delta commit), ``create`` (before a table is created), ``views`` (the view database
written, not yet renamed into place) or ``export`` (a batch of verdicts sent, not yet recorded).
A kill at a chosen write step, not after a sleep that lands wherever the machine's speed puts it."""

from __future__ import annotations

import os
import signal
from collections import Counter

_reached: Counter[str] = Counter()


def crash_point(step: str) -> None:
    wanted = os.environ.get("SCORELAKE_CRASH_AT")
    if not wanted:
        return
    name, _, count = wanted.partition(":")
    if name != step:
        return
    _reached[step] += 1
    if _reached[step] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
