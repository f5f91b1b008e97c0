"""The panels every face lays out, derived from their declarations: the command line prints them,
the viewer and the report draw them, each from the same spec (which metrics, their headings and
meanings, how a value reads). A metric given a heading in ``VOICE_METRICS`` or declared in
``LATENCY_METRICS`` is in all three."""

from __future__ import annotations

import html
from dataclasses import dataclass

from scorelake.transforms.columns import (
    CAUSE_NAMES,
    FAILURE_CAUSES,
    LATENCY_METRICS,
    SCENARIO_FIRST_RESPONSE,
    VOICE_METRICS,
    Column,
)

# A rate backed by fewer events than this is shown as a dash (tau2's leaderboard hides them too).
MIN_EVENTS = 10
DASH = "\u2014"


@dataclass(frozen=True)
class Panel:
    """A panel: its metrics (declared columns with a heading), in order, and the note under it."""

    metrics: tuple[Column, ...]
    note: str

    def cells(self, row: dict, events: bool = True) -> list[str]:
        """The row's value of each metric as it reads (``shown``)."""
        return [shown(row, metric, events) for metric in self.metrics]

    @property
    def labels(self) -> list[str]:
        return [metric.label for metric in self.metrics]

    def html_headings(self) -> str:
        """Each metric's heading as an HTML table heading, titled with what it measures."""
        return "".join(f'<th title="{html.escape(m.doc)}">{html.escape(m.label)}</th>' for m in self.metrics)

    def html_cells(self, row: dict, events: bool = True) -> str:
        """The row's values (``cells``) as HTML table cells."""
        return "".join(f"<td class=num>{html.escape(value)}</td>" for value in self.cells(row, events))


def shown(row: dict, metric: Column, events: bool = True) -> str:
    """One value as a face shows it: blank where nothing was measured, a dash below ``MIN_EVENTS``
    events (a roll-up, with ``events``), a share as a percentage, seconds to a tenth."""
    value = row[metric.name]
    if value is None:
        return ""
    if events and metric.events and (row[metric.events] or 0) < MIN_EVENTS:
        return DASH
    if metric.unit == "share":
        return f"{value * 100:.1f}%"
    if metric.unit == "s":
        return f"{value:.1f}"
    if metric.unit == "ms":
        return f"{value:.0f}"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def cause_counts(row: dict) -> str:
    """A roll-up's failed scenarios by primary cause, ``cause=n`` for each cause that has any."""
    return " ".join(f"{c}={row[f'failed_{c}']}" for c in CAUSE_NAMES if row[f"failed_{c}"])


# Each failure cause and what it means, in order of precedence (the legend beside the counts)
CAUSE_DOCS: tuple[tuple[str, str], ...] = tuple((c.name, c.doc) for c in FAILURE_CAUSES)

VOICE_PANEL = Panel(
    tuple(c for c in VOICE_METRICS if c.label),
    f"{DASH}: fewer than {MIN_EVENTS} events behind the rate; blank: nothing measured. barge-ins user: the user "
    "starting while the agent speaks, on tau2's ticks; interrupted: agent turns the runner logged [INTERRUPTED] "
    "(latency's count), which the segments need not show")

# Response latency in milliseconds, per run and domain; per scenario its own first response
LATENCY_PANEL = Panel(LATENCY_METRICS, "interrupted: agent turns the user talked over, and their share of agent turns")
LATENCY_SCENARIO_PANEL = Panel((*LATENCY_METRICS[:-1], SCENARIO_FIRST_RESPONSE), LATENCY_PANEL.note)
