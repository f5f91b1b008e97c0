"""Run-versus-run and judge-versus-judge comparison and the statistics behind them (exact McNemar,
Newcombe intervals, Cohen's kappa, Krippendorff's alpha)."""

from scorelake.transforms.analysis._compare import (
    Comparison,
    check_alpha,
    compare,
    delta_text,
    label,
    with_change_labels,
)
from scorelake.transforms.analysis._judges import (
    HUMAN,
    JudgeComparison,
    Sweep,
    cohen_kappa,
    compare_judges,
    is_people,
    krippendorff_alpha,
    threshold_sweep,
)
from scorelake.transforms.analysis._stats import (
    McNemar,
    mcnemar_exact,
    minimum_detectable_difference,
    newcombe_interval,
)

__all__ = ["HUMAN", "Comparison", "Sweep", "is_people", "check_alpha", "label", "minimum_detectable_difference", "JudgeComparison", "krippendorff_alpha", "threshold_sweep", "McNemar", "cohen_kappa", "compare", "compare_judges", "delta_text",
           "mcnemar_exact", "newcombe_interval", "with_change_labels"]
