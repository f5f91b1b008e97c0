"""Run-versus-run comparison and the statistics behind it (exact McNemar, Newcombe intervals)."""

from scorelake.transforms.analysis._compare import Comparison, compare, delta_text
from scorelake.transforms.analysis._stats import McNemar, mcnemar_exact, newcombe_interval

__all__ = ["Comparison", "McNemar", "compare", "delta_text", "mcnemar_exact", "newcombe_interval"]
