"""Documents made from the warehouse: the runner's ``all_summary.txt``, byte for byte, and the HTML report."""

from scorelake.transforms.render._report import render_report
from scorelake.transforms.render._summary import render_summary

__all__ = ["render_report", "render_summary"]
