"""Run-versus-run and judge-versus-judge comparison and the statistics behind them (exact McNemar,
Newcombe intervals, Cohen's kappa, Krippendorff's alpha, corrections for many tests), a judge's rate
corrected by people, prediction-powered rates, and a judge's verdicts kept with a guarantee."""

from scorelake.transforms.analysis._calibration import Corrected, Labels, rogan_gladen, with_calibration
from scorelake.transforms.analysis._compare import (
    Comparison,
    GateResult,
    Regression,
    check_alpha,
    compare,
    gate_tests,
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
from scorelake.transforms.analysis._ppi import (
    Estimate,
    active_rate,
    draw,
    inclusion_probabilities,
    ppi_rate,
    ppi_rates,
)
from scorelake.transforms.analysis._selective import Selection, binomial_cdf, select, upper_bound
from scorelake.transforms.analysis._stats import (
    CORRECTIONS,
    McNemar,
    adjusted_p_values,
    clopper_pearson,
    mcnemar_exact,
    minimum_detectable_difference,
    newcombe_interval,
)

__all__ = ["CORRECTIONS", "HUMAN", "MIN_KAPPA_PAIRS", "Comparison", "Corrected", "Estimate", "GateResult",
           "JudgeComparison", "LabelPlan", "Labels", "McNemar", "Regression", "Selection", "Sweep", "active_rate",
           "adjusted_p_values", "binomial_cdf", "check_alpha", "clopper_pearson", "cohen_kappa", "compare",
           "compare_judges", "draw", "gate_tests", "inclusion_probabilities", "is_people", "krippendorff_alpha", "label",
           "mcnemar_exact", "minimum_detectable_difference", "newcombe_interval", "pairs_for_width", "plan_labels",
           "ppi_rate", "ppi_rates", "rogan_gladen", "select", "threshold_sweep", "upper_bound", "with_calibration",
           "with_change_labels"]
