"""Run-versus-run and judge-versus-judge comparison and the statistics behind them (exact McNemar,
Newcombe intervals, Cohen's kappa)."""

from scorelake.transforms.analysis._compare import Comparison, compare, delta_text
from scorelake.transforms.analysis._judges import JudgeComparison, cohen_kappa, compare_judges
from scorelake.transforms.analysis._stats import McNemar, mcnemar_exact, newcombe_interval

__all__ = ["Comparison", "JudgeComparison", "McNemar", "cohen_kappa", "compare", "compare_judges", "delta_text",
           "mcnemar_exact", "newcombe_interval"]
