"""People's verdicts: recorded one at a time or from a file (one write step, one hold of the writer
lock), listed, and the queue of what to review next."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from scorelake._services._reads import Reads
from scorelake.storage import sql_text
from scorelake.transforms.errors import InvalidArgument, NotFound
from scorelake.transforms.names import RANKED_PICKS, RECORDED, REVIEW_PICKS
from scorelake.transforms.results import ReviewResult

if TYPE_CHECKING:
    from scorelake.transforms.analysis import LabelPlan



def reviewer_name(given: str | None) -> str:
    """Who reviews: as given, else ``$SCORELAKE_REVIEWER``, else the login name; as one voter
    (``reviewer_identity``: NFKC, case-folded), ``InvalidArgument`` saying why a name cannot be one."""
    import getpass
    import os

    from scorelake.transforms.scoring import reviewer_identity

    name = (given or os.environ.get("SCORELAKE_REVIEWER") or "").strip()
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            raise InvalidArgument("no reviewer: give --reviewer NAME or set SCORELAKE_REVIEWER") from None
    try:
        return reviewer_identity(name)
    except ValueError as exc:
        raise InvalidArgument(f"nothing stored: {exc}") from None


class Reviewing:
    def __init__(self, reads: Reads):
        self._reads = reads

    def review(self, run: str, scenario: str, signal: str, verdict: str | None = None, *, assertion: int | None = None,
               reviewer: str | None = None, note: str | None = None, withdraw: bool = False) -> ReviewResult:
        """Record a person's verdict (``pass`` or ``fail``) on one signal of a scenario (a
        ``success_breakdown`` name, or ``is_successful`` for the composite), or on one NL assertion
        or DB predicate (``assertion``: its number); ``withdraw`` takes the standing one back. The
        reviewer defaults to ``$SCORELAKE_REVIEWER``, else the login name. Nothing is overwritten:
        a later review of the same key supersedes this one. Policies that take reviews
        (``rescore(..., reviews=True)``) count it once re-scored."""
        from scorelake.pipeline import Review

        if withdraw == (verdict is not None):
            raise InvalidArgument("give a verdict (pass or fail), or withdraw the standing one")
        if verdict is not None and str(verdict).lower() not in ("pass", "fail"):
            raise InvalidArgument(f"nothing stored: verdict '{str(verdict)[:40]}': pass or fail (withdraw takes the "
                                  "standing one back)")
        given = Review(run, scenario, signal, "withdrawn" if withdraw else str(verdict).lower(),
                       reviewer_name(reviewer), assertion, note or None)
        return self._record([given])

    def undo_review(self, run: str, scenario: str, signal: str, *, assertion: int | None = None,
                    reviewer: str | None = None) -> ReviewResult:
        """Take back the reviewer's latest review of one key: the verdict (and note) they gave before
        it stands again, recorded as a new review; with none before it, the latest is withdrawn.
        ``NotFound`` when the reviewer never reviewed it."""
        from scorelake.pipeline import Review

        who = reviewer_name(reviewer)
        mine = self.reviews(run, history=True).filter(
            (pl.col("scenario_name") == scenario) & (pl.col("signal") == signal)
            & pl.col("assertion").eq_missing(assertion) & (pl.col("reviewer") == who)).sort("reviewed_at", "review_id")
        if mine.is_empty():
            raise NotFound(f"nothing to undo: {who} never reviewed {signal} of {run}/{scenario}")
        before = mine.row(-2, named=True) if mine.height > 1 else None
        verdict, note = (before["verdict"], before["note"]) if before else ("withdrawn", None)
        return self._record([Review(run, scenario, signal, verdict, who, assertion, note)])

    def import_reviews(self, path: str | Path, reviewer: str | None = None) -> ReviewResult:
        """Record the reviews of a CSV file (header: run_id, scenario_name, signal, verdict, and
        optionally assertion, reviewer, note) or a JSON Lines file, in one write step: a file with
        any bad line stores nothing, and the error names every bad line."""
        from scorelake.pipeline import read_review_file

        reviews, unreadable = read_review_file(Path(path), reviewer_name(reviewer))
        return self._record(reviews, unreadable, f"{path}: ")

    def _record(self, reviews: list, unreadable: Sequence[str] = (), source: str = "") -> ReviewResult:
        from scorelake.flows import runtime

        self._reads.writable()
        return runtime.record_reviews(self._reads.location, reviews, unreadable, source)

    def _active_draw(self, run: str | None, policy: str, budget: int, seed: int) -> pl.DataFrame:
        """The scenarios the active draw of ``budget`` and ``seed`` over ``run`` (or every run) drew,
        with their chances: the draw made and recorded first if it is not yet."""
        from scorelake.pipeline import active_draw

        if budget < 1:
            raise InvalidArgument(f"active: a budget of at least 1 label (got {budget})")
        with self._reads.connection():
            population = self._reads.query("active_population", policy_id=self._reads.scoped(policy, run), run=run)
        self._reads.writable()
        return active_draw(self._reads.store, population, run, int(budget), int(seed))

    def reviews(self, run: str | None = None, history: bool = False) -> pl.DataFrame:
        """The reviews that stand (each reviewer's, one per run, scenario, signal, assertion and
        reviewer), or every review ever made (``history``: superseded and withdrawn ones too,
        ``standing`` saying which stand)."""
        with self._reads.connection():
            self._reads.runs_known([run] if run else None)
            found = self._reads.query("reviews", run=run, history=history)
        return found if history else found.drop("standing")

    def review_progress(self) -> pl.DataFrame:
        """Per reviewer, the scenarios they have a standing verdict on and their verdicts; first a row
        ``(all)`` with the scenarios anyone reviewed and those whose reviewers disagree."""
        return self._reads.query("review_progress")

    def review_queue(self, pick: str = "errors", run: str | None = None, policy: str = RECORDED, *,
                     judges: Sequence[str] = (), seed: int = 0, per_domain: int = 5, limit: int = 200,
                     plan: LabelPlan | None = None, between: Sequence[str] = (), budget: int = 50) -> pl.DataFrame:
        """What to review next: the scenarios whose judge failed (``errors``), those two stored
        ``judges`` disagree on (``disagree``), those whose reviewers disagree (``reviewers``), those
        whose outcome changed between two runs (``changed``, ``between=[A, B]``: B's scenarios), or a
        random sample of ``per_domain`` per domain, the same for the same ``seed`` (``sample``: two
        reviewers can split one), or by voice, the most first: dead air (``dead_air``), turns one side
        never heard (``missing_turns``), the word error rate of what the agent heard (``wer``); of
        ``run`` or all runs, under ``policy``. Scenarios nobody has reviewed come first (``reviews``:
        how many they have).
        ``sample`` with a ``plan`` (``compare_judges(..., plan=WIDTH).plan``) draws the plan's
        stratified sample instead: per domain and the judge's verdict, as many unlabelled scenarios
        as it asks for.
        ``escalated``: the scenarios whose verdict of the policy's judge its calibration
        (``calibrate_judge``) escalates to people, the least confident first. ``active``: about
        ``budget`` scenarios drawn at random, each with a chance that grows with the judge's doubt
        (its instability, its confidence), recorded so that ``ppi_rates`` weighs their labels by it
        and stays unbiased; the same ``seed`` and ``budget`` read the same draw back."""
        if pick not in REVIEW_PICKS:
            raise InvalidArgument(f"pick '{pick}': one of {', '.join(REVIEW_PICKS)}")
        if pick == "disagree" and len(judges) != 2:
            raise InvalidArgument("disagree: name the two judges whose verdicts differ (judges=[A, B])")
        if pick == "changed" and len(between) != 2:
            raise InvalidArgument("changed: name the two runs, the earlier first (between=[A, B])")
        drawn = self._active_draw(run, policy, budget, seed) if pick == "active" else None
        with self._reads.connection():
            params = {"run": run, "policy_id": self._reads.scoped(policy, run, *between), "limit": max(int(limit), 0)}
            if drawn is not None:  # passed as values: a connection opened before the draw reads no view of it
                params.update(drawn_runs=drawn["run_id"].to_list(), drawn_scenarios=drawn["scenario_name"].to_list(),
                              chances=drawn["probability"].to_list())
            if pick == "changed":
                params.update(run_a=between[0], run_b=between[1])
            if pick == "disagree":
                params.update(judge_a=judges[0], judge_b=judges[1])
            if pick == "sample":
                params.update(seed=int(seed), per_domain=max(int(per_domain), 1))
            if plan is not None:
                if pick != "sample":
                    raise InvalidArgument("a label plan is drawn by the sample pick")
                wanted = plan.strata.filter(pl.col("more") > 0)
                params.update(judge_a=plan.judge, domains=wanted["domain"].to_list(),
                              verdicts=wanted["judge_passed"].to_list(), counts=wanted["more"].to_list())
                params.pop("per_domain")
            draw = ("hash($seed, {0}.run_id, {0}.scenario_name)" if pick == "sample"
                    else "{0}.weight DESC, {0}.run_id" if pick in RANKED_PICKS else "{0}.run_id")
            picks = "planned" if plan is not None else pick
            parts = {"picks": sql_text("queries", f"review_pick_{picks}.sql"), "draw_p": draw.format("p"),
                     "draw_q": draw.format("q")}
            return self._reads.query("review_queue", parts, **params)
