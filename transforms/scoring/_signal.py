"""The success signals: the names the whitelists, breakdowns and policies use."""

from __future__ import annotations

from enum import StrEnum

from scorelake.transforms.names import SIGNALS


class Signal(StrEnum):
    """``SuccessSignal`` of the upstream runner; member order is the order of ``success_breakdown``
    (``names.SIGNALS``)."""

    ACTION_MATCH = SIGNALS[0]
    DB_STATE_MATCH = SIGNALS[1]
    DB_STATE_ASSERTION = SIGNALS[2]
    NL_ASSERTION = SIGNALS[3]
    JUDGE_PASSED = SIGNALS[4]
    CLEAN_EXIT = SIGNALS[5]
    # tau2's COMMUNICATE check (its communicate_checks all met): no runner analogue, so last, and
    # never in a voice-agent scenario's whitelist (NEMO_SIGNALS).
    COMMUNICATE = SIGNALS[6]


NEMO_SIGNALS = tuple(s for s in Signal if s is not Signal.COMMUNICATE)  # the runner's SuccessSignal
