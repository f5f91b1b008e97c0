"""Documents made from the warehouse: the runner's ``all_summary.txt``, byte for byte, the HTML
report, and the explanation of one scenario's verdict (text and HTML)."""

from scorelake.transforms.render._explain import (
    Checks,
    Explanation,
    Moment,
    PlacedCall,
    explain,
    explain_html,
    explain_text,
)
from scorelake.transforms.render._report import render_report
from scorelake.transforms.render._summary import render_summary

__all__ = ["Checks", "Explanation", "Moment", "PlacedCall", "explain", "explain_html", "explain_text", "render_report", "render_summary"]
