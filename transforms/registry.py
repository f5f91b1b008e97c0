"""The success signals and the rates, declared once: everything else reads them from here.

A signal is its declaration: what it is called in each place it appears (the whitelist and
``success_breakdown``, the ``scores`` column, the rate columns), its computation (a Polars
expression, ``signal_rules.py``), what its rate counts, how the command line and pages label it,
whose it is (upstream's signals alone can appear in upstream's ``success_breakdown`` unlisted) and
what a source fills for it. Derived from these: the ``Signal`` enum, the scoring and the breakdown
(``scoring/``), the ``scores`` and ``rate_counts`` schemas (``columns.py``), the rate roll-up and
the per-signal SQL (``sql/``, through ``storage/_fragments.py``), the review columns, the command
line's tables and ``show``'s facts. The manual's "Adding a signal" (docs/development.md) is the recipe.

Imports only Polars (for the expressions): the light read paths read these names too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from scorelake.transforms import signal_rules as rules

# The version of the scoring rules, stored with each score and part of a policy's id: raise it when a
# signal's computation changes, so that scores by the new rules are stored apart from the old ones.
SCORER_VERSION = "1"


# Whose a signal is: the voice-agent runner's SuccessSignal, tau2's reward basis, or scorelake's own
RUNNER, TAU2, OWN = "runner", "tau2", "own"


@dataclass(frozen=True)
class SignalDecl:
    name: str  # in whitelists and success_breakdown (upstream's SuccessSignal value)
    rate: str  # prefix of its rate columns: <rate>_passed, <rate>_total, <rate>_rate, <rate>_ci_low/high;
    # upper-cased, its Signal member's name
    label: str  # as tables and pages head it
    help: str  # what it checks, in a line
    source: str  # what a source fills for it (scenarios columns)
    expression: Callable[[], pl.Expr]  # its scores value from scenarios columns and a policy's eff_* ones
    origin: str = RUNNER  # RUNNER, TAU2 or OWN
    pass_rate: bool = False  # its scores value is a pass rate (passes only at 1.0), not a verdict
    # The scenario's own (passed, total) item counts: a pass-rate signal's rate counts these items,
    # a verdict signal with items shows them as its evidence.
    items: tuple[str, str] | None = None
    item_noun: str = ""  # what an item is ("predicates")

    @property
    def upstream(self) -> bool:
        """Upstream's (the runner's or tau2's): named in ``success_breakdown`` whenever it has a
        value; a signal of scorelake's own only where a policy lists it."""
        return self.origin != OWN

    @property
    def value(self) -> str:
        """The ``scores`` column holding its per-scenario value."""
        return f"{self.name}_pass_rate" if self.pass_rate else self.name

    @property
    def unit(self) -> str:
        """What its rate counts."""
        return self.item_noun if self.pass_rate else "scenarios"


# In success_breakdown order: the runner's SuccessSignal, then tau2's COMMUNICATE, then scorelake's own.
SIGNALS: tuple[SignalDecl, ...] = (
    SignalDecl("is_action_match", "action_match", "action match",
               "the agent's final answer matches the reference (the comparator's rules: strict or lenient)",
               "reference_json, prediction_json and the comparator's outcome", rules.action_match),
    SignalDecl("db_state_match", "db_state_match", "db match",
               "the final database's hash equals the expected one (tau2: its db_check)",
               "expected_db_hash, actual_db_hash; db_match_recorded where a source has no hashes",
               rules.db_state_match),
    SignalDecl("db_state_assertion", "db_state_assertion", "db assertions",
               "every DB-state predicate holds on the final database", "dbsa_passed, dbsa_total",
               rules.db_state_assertion_pass_rate, pass_rate=True, items=("dbsa_passed", "dbsa_total"),
               item_noun="predicates"),
    SignalDecl("nl_assertion", "nl_assertion", "nl assertions",
               "every natural-language assertion the judge graded passed", "nl_passed, nl_total",
               rules.nl_assertion_pass_rate, pass_rate=True, items=("nl_passed", "nl_total"),
               item_noun="assertions"),
    SignalDecl("judge_passed", "judge_passed", "judge passed",
               "the judge's score reaches the threshold (inclusive)", "judge_score", rules.judge_passed),
    SignalDecl("clean_exit", "clean_exit", "clean exit",
               "the conversation ended by a normal stop, not a limit or an error", "stop_reason",
               rules.clean_exit),
    # tau2 only: voice-agent runs have no communicate checks, so never in their whitelists
    SignalDecl("communicate", "communicate", "communicate",
               "tau2's communicate checks all met", "communicate_passed, communicate_total",
               rules.communicate, origin=TAU2, items=("communicate_passed", "communicate_total"),
               item_noun="checks"),
)

SIGNAL_NAMES: tuple[str, ...] = tuple(s.name for s in SIGNALS)
BY_NAME: dict[str, SignalDecl] = {s.name: s for s in SIGNALS}
# The pass-rate signals: reviewed item by item too (an NL assertion, a DB predicate: --assertion N).
ITEM_SIGNALS: tuple[str, ...] = tuple(s.name for s in SIGNALS if s.pass_rate)


@dataclass(frozen=True)
class RateDecl:
    """A rate of the roll-up: its counts' prefix, its rate column, its interval's prefix."""

    prefix: str  # <prefix>_passed, <prefix>_total
    rate: str
    interval: str  # <interval>_low, <interval>_high
    label: str
    signal: str | None = None  # the success signal it rates (None: a composite)


# Every rate of a run, policy and domain, in the summary's order: the two composites, then each signal.
RATES: tuple[RateDecl, ...] = (
    RateDecl("success", "success_rate", "success_ci", "success"),
    RateDecl("task", "task_success_rate", "task_ci", "task"),
    *(RateDecl(s.rate, f"{s.rate}_rate", f"{s.rate}_ci", s.label, s.name) for s in SIGNALS),
)
