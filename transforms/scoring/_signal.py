"""The success signals: the names the whitelists, breakdowns and policies use."""

from __future__ import annotations

from enum import StrEnum


class Signal(StrEnum):
    """``SuccessSignal`` of the upstream runner; member order is the order of ``success_breakdown``."""

    ACTION_MATCH = "is_action_match"
    DB_STATE_MATCH = "db_state_match"
    DB_STATE_ASSERTION = "db_state_assertion"
    NL_ASSERTION = "nl_assertion"
    JUDGE_PASSED = "judge_passed"
    CLEAN_EXIT = "clean_exit"
    # tau2's COMMUNICATE check (its communicate_checks all met): no runner analogue, so last, and
    # never in a voice-agent scenario's whitelist (NEMO_SIGNALS).
    COMMUNICATE = "communicate"


NEMO_SIGNALS = tuple(s for s in Signal if s is not Signal.COMMUNICATE)  # the runner's SuccessSignal

