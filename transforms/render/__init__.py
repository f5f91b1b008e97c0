"""Documents made from the warehouse: the runner's ``all_summary.txt``, byte for byte, and the
explanation of one scenario's verdict (the model, and as text; its HTML is ``scorelake.html``)."""

from scorelake.transforms.render._explain import (
    Checks,
    Explanation,
    Moment,
    PlacedCall,
    explain,
    explain_text,
    mark,
)
from scorelake.transforms.render._summary import render_summary

__all__ = ["Checks", "Explanation", "Moment", "PlacedCall", "explain", "explain_text", "mark", "render_summary"]
