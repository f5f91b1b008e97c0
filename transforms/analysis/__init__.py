"""Run-versus-run and judge-versus-judge comparison and the statistics behind them (exact McNemar,
Newcombe intervals, Cohen's kappa, Krippendorff's alpha), and a judge's rate corrected by people."""

from scorelake.transforms.analysis._calibration import Corrected, Labels, rogan_gladen, with_calibration
from scorelake.transforms.analysis._compare import (
    Comparison,
    GateResult,
    Regression,
    check_alpha,
    compare,
    label,
    with_change_labels,
)
from scorelake.transforms.analysis._judges import (
    HUMAN,
    MIN_KAPPA_PAIRS,
    JudgeComparison,
    Sweep,
    cohen_kappa,
    compare_judges,
    is_people,
    krippendorff_alpha,
    threshold_sweep,
)
from scorelake.transforms.analysis._planning import LabelPlan, pairs_for_width, plan_labels
from scorelake.transforms.analysis._stats import (
    McNemar,
    clopper_pearson,
    mcnemar_exact,
    minimum_detectable_difference,
    newcombe_interval,
)

__all__ = ["HUMAN", "MIN_KAPPA_PAIRS", "Comparison", "Corrected", "GateResult", "JudgeComparison", "LabelPlan", "Labels", "McNemar",
           "Regression", "Sweep", "check_alpha", "clopper_pearson", "cohen_kappa", "compare", "compare_judges", "is_people",
           "krippendorff_alpha", "label", "mcnemar_exact", "minimum_detectable_difference", "newcombe_interval",
           "pairs_for_width", "plan_labels", "rogan_gladen", "threshold_sweep", "with_calibration",
           "with_change_labels"]
