"""How many more labels: the people's labels that would bring a judge's kappa interval (against
people, or another judge) to a width, and how to spread them over domains and the judge's verdicts.

The kappa interval's half-width is ``Z95 * sqrt(p_o (1 - p_o) / n) / (1 - p_e)`` (``cohen_kappa``'s
large-sample standard error), so a width ``W`` takes ``n = (2 Z95)^2 p_o (1 - p_o) / ((1 - p_e)^2 W^2)``
pairs, with the agreement ``p_o`` and chance agreement ``p_e`` measured so far (or, with fewer than
two labels of each kind, a planning guess: ``p_o`` 0.8, ``p_e`` 0.5). The labels still needed
(``n`` less those labelled) are spread over the strata (domain x the judge's verdict) in proportion
to each one's shortfall from its share of ``n`` (its scenarios' share of all), by largest
remainders, and never past the scenarios a stratum has unlabelled: a stratified sample, so that a
rare domain or verdict is not left out, and whose parts add up to what the plan says.
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
    agreement: float  # the p_o and p_e the plan took
    chance: float

    @property
    def more(self) -> int:
        """Labels to add: the strata's, adding up to ``needed`` less ``labelled`` where the scenarios allow."""
        return int(self.strata["more"].sum()) if self.strata.height else 0

    @property
    def unlabelled(self) -> int:
        """The scenarios in scope nobody labelled yet: all the plan can ask for."""
        return int((self.strata["scenarios"] - self.strata["labelled"]).clip(0).sum()) if self.strata.height else 0

    def arithmetic(self) -> str:
        """How ``needed`` follows from the width, in numbers."""
        return (f"(2 x {Z95:.2f})^2 x {self.agreement:.2f} x {1 - self.agreement:.2f} / "
                f"((1 - {self.chance:.2f})^2 x {self.width:g}^2) = {self.needed}")


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
    chance = min(chance, 0.99)
    needed = pairs_for_width(agreement, chance, width)
    key = ["domain", "judge_passed"]
    sizes = population.group_by(key).agg(pl.len().alias("scenarios"))
    done = labelled.group_by(key).agg(pl.len().alias("labelled"))
    strata = (sizes.join(done, on=key, how="left", nulls_equal=True).with_columns(pl.col("labelled").fill_null(0))
              .sort(key))
    total = max(int(strata["scenarios"].sum()), 1)
    share = strata["scenarios"] * max(needed, n) / total  # each stratum's part of the pairs needed
    more = _spread(max(needed - n, 0), (share - strata["labelled"]).clip(0).to_list(),
                   (strata["scenarios"] - strata["labelled"]).clip(0).to_list())
    return LabelPlan(judge, width, n, needed, not kinds, strata.with_columns(pl.Series("more", more, pl.Int64)),
                     agreement, chance)


def _spread(count: int, weights: list[float], room: list[int]) -> list[int]:
    """``count`` labels over strata in proportion to ``weights`` by largest remainders, none past its
    ``room``; what a full stratum cannot take goes to the others (by their room, once no weight is
    left); all the room there is when that is less than ``count``."""
    given = [0] * len(room)
    left = min(count, sum(room))
    while left > 0:
        open_ = [i for i in range(len(room)) if given[i] < room[i]]
        weight = {i: weights[i] for i in open_ if weights[i] > 0} or {i: float(room[i] - given[i]) for i in open_}
        whole = sum(weight.values())
        quota = {i: left * w / whole for i, w in weight.items()}
        taken = {i: min(math.floor(q), room[i] - given[i]) for i, q in quota.items()}
        rest = left - sum(taken.values())
        for i in sorted(quota, key=lambda i: quota[i] - math.floor(quota[i]), reverse=True):
            if rest and taken[i] < room[i] - given[i]:
                taken[i], rest = taken[i] + 1, rest - 1
        for i, t in taken.items():
            given[i] += t
        if not sum(taken.values()):
            break
        left -= sum(taken.values())
    return given
