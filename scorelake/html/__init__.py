"""HTML made from the warehouse's answers: one scenario's explanation (``_explain``) and the
self-contained report (``_report``). The models they render are transforms (``scorelake.transforms.render``,
``scorelake.transforms.analysis``); the viewer's pages are ``scorelake.web``."""

from scorelake.html._explain import explain_html
from scorelake.html._report import render_report

__all__ = ["explain_html", "render_report"]
