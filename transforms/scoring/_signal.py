"""The success signals as an enum, derived from their declarations (``registry.SIGNALS``): the
names the whitelists, breakdowns and policies use, in ``success_breakdown``'s order."""

from __future__ import annotations

from enum import StrEnum

from scorelake.transforms.registry import RUNNER, SIGNALS

# Upstream's ``SuccessSignal`` (ACTION_MATCH ... CLEAN_EXIT), then tau2's COMMUNICATE, then any of
# scorelake's own; a member is named after its rate prefix.
Signal = StrEnum("Signal", [(s.rate.upper(), s.name) for s in SIGNALS], module=__name__)

NEMO_SIGNALS = tuple(Signal(s.name) for s in SIGNALS if s.origin == RUNNER)  # the runner's SuccessSignal
