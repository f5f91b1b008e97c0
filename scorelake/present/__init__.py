"""The presentation floor: the API's typed answers and the declarations made into what a person
reads. The panels (``_panels``: each face lays out the same spec), one scenario's explanation (the
model, its text for ``scorelake show`` and its HTML for the viewer), the runner's
``all_summary.txt`` byte for byte, and the self-contained report. The command line, the viewer and
the report draw from here; nothing here reads the warehouse."""

from scorelake.present._explain import Checks, Explanation, Moment, PlacedCall, explain, explain_text, mark
from scorelake.present._explain_html import EXPLAIN_STYLE, explain_html
from scorelake.present._gate import (
    LISTED,
    delta_text,
    gate_summary,
    listed,
    mcnemar_text,
    not_compared,
    regression_text,
)
from scorelake.present._glossary import GLOSSARY, column_meaning, titled_headings
from scorelake.present._headline import headline_facts, headline_text
from scorelake.present._panels import (
    CAUSE_DOCS,
    LATENCY_PANEL,
    LATENCY_SCENARIO_PANEL,
    MIN_EVENTS,
    VOICE_PANEL,
    Panel,
    cause_counts,
    shown,
)
from scorelake.present._report import render_report
from scorelake.present._summary import render_summary

__all__ = ["CAUSE_DOCS", "Checks", "EXPLAIN_STYLE", "Explanation", "GLOSSARY", "LATENCY_PANEL", "LATENCY_SCENARIO_PANEL", "LISTED", "MIN_EVENTS",
           "Moment", "Panel", "PlacedCall", "VOICE_PANEL", "cause_counts", "column_meaning", "delta_text", "explain", "explain_html",
           "explain_text", "gate_summary", "headline_facts", "headline_text", "listed", "mark", "mcnemar_text", "not_compared", "regression_text",
           "render_report", "render_summary", "shown", "titled_headings"]
