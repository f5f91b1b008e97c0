"""How many more labels: the people's labels that would bring a judge's kappa interval (against
people, or another judge) to a width, and how to spread them over domains and the judge's verdicts.

The kappa interval's half-width is ``Z95 * sqrt(p_o (1 - p_o) / n) / (1 - p_e)`` (``cohen_kappa``'s
large-sample standard error), so a width ``W`` takes ``n = (2 Z95)^2 p_o (1 - p_o) / ((1 - p_e)^2 W^2)``
pairs, with the agreement ``p_o`` and chance agreement ``p_e`` measured so far (or, with fewer than
two labels of each kind, a planning guess: ``p_o`` 0.8, ``p_e`` 0.5). The labels are spread over
the strata (domain x the judge's verdict) in proportion to the scenarios each holds, less those
labelled already: a stratified sample, so that a rare domain or verdict is not left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from scorelake.transforms.analysis._stats import Z95

GUESS_AGREEMENT, GUESS_CHANCE = 0.8, 0.5


@dataclass(frozen=True)
class LabelPlan:
    judge: str  # the judge measured against people
    width: float  # the kappa interval's width aimed at
    labelled: int  # pairs labelled so far
    needed: int  # pairs the width takes
    guessed: bool  # p_o and p_e guessed: too few labels of each kind to measure them
    strata: pl.DataFrame  # domain, judge_passed, scenarios, labelled, more

    @property
    def more(self) -> int:
        return int(self.strata["more"].sum()) if self.strata.height else 0


def pairs_for_width(agreement: float, chance: float, width: float) -> int:
    """Pairs that bring the kappa interval to ``width`` at this agreement and chance agreement."""
    return math.ceil((2 * Z95) ** 2 * agreement * (1 - agreement) / ((1 - chance) ** 2 * width ** 2))


def plan_labels(judge: str, width: float, counts: tuple[int, int, int, int], population: pl.DataFrame,
                labelled: pl.DataFrame) -> LabelPlan:
    """``judge``'s plan for ``width`` from the pairs so far (``counts``: both pass, only A, only B, neither),
    the judge's verdicts on every scenario in scope (``population``: domain, judge_passed) and those
    labelled (``labelled``: domain, judge_passed)."""
    both, only_a, only_b, neither = counts
    n = sum(counts)
    kinds = ((both + only_a) >= 2 and (neither + only_b) >= 2) and ((both + only_b) >= 2 and (neither + only_a) >= 2)
    if kinds:
        chance = ((both + only_a) * (both + only_b) + (neither + only_b) * (neither + only_a)) / n ** 2
        # a judge that agrees perfectly so far leaves no spread to measure: plan as for one disagreement
        agreement = min((both + neither) / n, 1 - 1 / n)
    else:
        agreement, chance = GUESS_AGREEMENT, GUESS_CHANCE
    needed = pairs_for_width(agreement, min(chance, 0.99), width)
    key = ["domain", "judge_passed"]
    sizes = population.group_by(key).agg(pl.len().alias("scenarios"))
    done = labelled.group_by(key).agg(pl.len().alias("labelled"))
    strata = sizes.join(done, on=key, how="left", nulls_equal=True).with_columns(pl.col("labelled").fill_null(0))
    total = max(int(strata["scenarios"].sum()), 1)
    target = max(needed, n)
    strata = strata.with_columns(
        pl.min_horizontal(pl.col("scenarios") - pl.col("labelled"),
                          ((pl.col("scenarios") * target / total).ceil().cast(pl.Int64) - pl.col("labelled")).clip(0))
        .alias("more")).sort(key)
    return LabelPlan(judge, width, n, needed, not kinds, strata)
