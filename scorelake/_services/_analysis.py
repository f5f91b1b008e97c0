"""Analysis over the views: rates, comparisons and the gate, history, pass^k and flaky tasks, the
summary and the report, latency, the voice panel and cost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl

from scorelake._services._reading import Reading
from scorelake._services._reads import Reads
from scorelake.transforms.errors import MAX_PRICE, InvalidArgument, NotFound, check_range
from scorelake.transforms.names import COST_SIDES, RECORDED
from scorelake.transforms.results import Headline, SpeechTimeline, records

if TYPE_CHECKING:
    from scorelake.transforms.analysis import Comparison, GateResult

REPORT_SCENARIO_PAGES = 1000  # scenario sections a report carries at most (the rest: scorelake view)
BY_DOMAIN_OR_SCENARIO = ("domain", "scenario")


def _by(what: str, by: str, choices: Sequence[str]) -> None:
    if by not in choices:
        raise InvalidArgument(f"{what} by '{by}': choose {' or '.join(choices)}")


class Analysis:
    def __init__(self, reads: Reads, reading: Reading):
        self._reads, self._reading = reads, reading

    def rates(self, by: Literal["domain", "signal", "scorer"] = "domain", run: str | None = None,
              policy: str = RECORDED, *, calibrated: bool = False) -> pl.DataFrame:
        """Success, task-success and per-signal rates per run and domain, or per run and signal; or,
        of Inspect AI runs, per run, task and scorer the metrics Inspect computes (``scorer_metrics``:
        accuracy, mean, stderr, recomputed from the stored values), whatever the policy.

        ``calibrated``: JUDGE_PASSED's rate corrected by people's labels of the run (reviews of
        judge_passed): the judge's sensitivity and specificity against them (``judge_labels`` of
        them), the corrected rate and its 95% interval (``transforms.analysis.rogan_gladen``)."""
        from scorelake.transforms.analysis import with_calibration

        _by("rates", by, ("domain", "signal", "scorer"))
        if by == "scorer":
            if calibrated:
                raise InvalidArgument("--calibrated corrects JUDGE_PASSED: by domain or by signal")
            self._reads.runs_known([run] if run else None)
            return self._reads.query("rates_by_scorer", run_id=run)
        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            found = self._reads.query(f"rates_by_{by}", policy_id=policy_id, run_id=run)
            if not calibrated:
                return found
            if self._reads.policy(policy)["reviews"]:
                raise InvalidArgument(f"policy '{policy}' takes reviews: its judge_passed is people's where they "
                                      "reviewed; calibrate the judge's own policy")
            labels = self._reads.query("calibration_labels", policy_id=policy_id, run_id=run)
        return with_calibration(found, labels, by)

    def selective_rates(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """Per run and domain (the whole run first), the verdicts of the policy's judge its calibration
        keeps (``judges --calibrate``) and those it escalates to people: the kept verdicts' pass rate
        with its interval, the coverage and the escalated count, beside the judge's rate over all."""
        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            judge = self._reads.policy(policy)["judge"]
            if self._reads.query("calibrations", judge=judge).is_empty():
                raise NotFound(f"judge '{judge}' (policy '{policy}') has no calibration: "
                                   f"scorelake judges --calibrate {judge}")
            return self._reads.query("rates_selective", policy_id=policy_id, run_id=run)

    def ppi_rates(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """Per run and domain (the whole run first), JUDGE_PASSED's rate four ways: the judge's alone,
        people's labels alone, Rogan-Gladen's correction and prediction-powered (PPI++ with its
        power tuning, or the active estimator where the labels were drawn by the ``active`` pick),
        each with its 95% interval (``transforms.analysis.ppi_rates``)."""
        from scorelake.transforms.analysis import ppi_rates

        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            if self._reads.policy(policy)["reviews"]:
                raise InvalidArgument(f"policy '{policy}' takes reviews: its judge_passed is people's where they "
                                      "reviewed; use the judge's own policy")
            verdicts = self._reads.query("ppi_verdicts", policy_id=policy_id, run_id=run)
        return ppi_rates(verdicts)

    def headlines(self, run: str | None = None, policy: str = RECORDED, *, alpha: float = 0.05) -> list[Headline]:
        """Each run in one line under ``policy`` (``run``: only it), oldest session first: success with
        its interval and n, the change from the run before it in its group (labelled as ``history``
        labels it, at ``alpha``), the judge's errors, the stalls and the worst domain."""
        from scorelake.transforms.analysis import with_change_labels

        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            found = self._reads.query("headlines", policy_id=policy_id, run_id=run)
        return records(Headline, with_change_labels(found, alpha))

    def judge_errors(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """The scenarios whose LLM judge failed (upstream scored them 0.0), with ``judge_only`` where
        the judge's signals are all that failed them: judge outages that read as agent failures."""
        with self._reads.connection():
            return self._reads.query("judge_errors", policy_id=self._reads.scoped(policy, run), run_id=run)

    def compare(self, run_a: str, run_b: str, policy: str = RECORDED, *, alpha: float = 0.05,
                all_scenarios: bool = False, task_map: str | None = None) -> Comparison:
        """Run B against baseline A, like with like: the scenarios both ran with the same definition,
        paired; per domain the rates with intervals, the delta with its interval, an exact McNemar
        test labelling the change (improved, regressed, inconclusive, unchanged at ``alpha``) and the
        smallest difference the pairs could detect; apart, the scenarios only in A or only in B, the
        definitions that changed and whether the judge or the scoring flags differ. ``all_scenarios``:
        each run's rates over all its scenarios, every scenario both have paired by name.
        ``task_map``: a declared map (``declare_task_map``) pairs them instead, for runs of two
        harnesses (a voice-agent session and a tau2-bench run); ``Comparison.nothing_matches`` says
        so in words when no scenario pairs."""
        from scorelake.pipeline import comparison

        with self._reads.connection() as con:
            return comparison(self._reads.store, con, run_a, run_b, self._reads.scoped(policy, run_a, run_b), alpha,
                              all_scenarios, task_map)

    def declare_task_map(self, name: str, path: str | Path) -> int:
        """Store the task map of the CSV file ``path`` (header ``a,b``: run A's scenario name or task
        id, and run B's it is) as ``name``, replacing a map of that name; the pairs it holds."""
        from scorelake.pipeline import declare_task_map, read_task_map

        pairs = read_task_map(Path(path))
        self._reads.writable()
        declare_task_map(self._reads.store, name, pairs)
        return len(pairs)

    def task_maps(self) -> pl.DataFrame:
        """The task maps declared: each with its pairs and when it was declared."""
        return self._reads.query("task_maps", map_name=None)

    def gate(self, base: str, candidate: str, policy: str = RECORDED, *, alpha: float = 0.05, max_drop: float = 0.0,
             domains: Sequence[str] = (), max_p95_rise: float | None = None, max_overlap_rise: float | None = None,
             max_wer_rise: float | None = None, correction: str = "holm") -> GateResult:
        """Whether ``candidate`` may replace ``base``: it fails when a domain (of ``domains``, default
        every one) or the whole run regressed beyond the noise (McNemar at ``alpha`` on the scenarios
        both ran with the same definition) by more than ``max_drop`` points, or (``max_p95_rise``)
        when its p95 response latency rose by more than that many milliseconds, or
        (``max_overlap_rise``) its mean overlap of speech per scenario by more than that many seconds,
        or (``max_wer_rise``) the word error rate of what its agent heard by more than that many points.
        The tests of the domains and the whole run are corrected for being many (``correction``:
        ``holm``, ``bh`` or ``none``); ``GateResult.tests`` holds each with the smallest drop it can
        detect at 80% power."""
        from scorelake.pipeline import gate
        from scorelake.transforms.analysis import CORRECTIONS

        if correction not in CORRECTIONS:
            raise InvalidArgument(f"correction '{correction}': one of {', '.join(CORRECTIONS)}")
        return gate(self.compare(base, candidate, policy, alpha=alpha), max_drop, domains, max_p95_rise,
                    max_overlap_rise, max_wer_rise, correction)

    def passk(self, group: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """pass^k per run group and domain, recomputed and claimed side by side."""
        return self._reads.query("passk", policy_id=self._reads.policy_id(policy), run_group=group)

    def history(self, domain: str = "(all)", policy: str = RECORDED, *, alpha: float = 0.05) -> pl.DataFrame:
        """Composite and task rates across runs in session order, for one domain or the whole run,
        with the response latency's p50 and p95 and each run's change from the run before it in its
        group: the paired scenarios (same definition), broken, fixed, the exact McNemar p-value and
        ``change`` (improved, regressed, inconclusive or unchanged: never regressed within the noise)."""
        from scorelake.transforms.analysis import with_change_labels

        with self._reads.connection():
            return with_change_labels(self._reads.query("history", policy_id=self._reads.policy_id(policy),
                                                        domain=domain), alpha)

    def flaky(self, run: str | None = None, group: str | None = None, policy: str = RECORDED, *,
              min_verdicts: int = 2) -> pl.DataFrame:
        """The tasks whose verdict both passed and failed across the comparable runs (and trials) of
        their group, most often flipping first: of ``run``'s group and run in it, of one ``group``, or
        of every group. verdicts, runs, passed, failed, flips and flip_rate (flips per verdict after the first)."""
        if min_verdicts < 2:
            raise InvalidArgument(f"min_verdicts {min_verdicts}: at least 2 (one verdict cannot flip)")
        with self._reads.connection():
            return self._reads.query("flaky", policy_id=self._reads.scoped(policy, run), run_id=run, run_group=group,
                                     min_verdicts=min_verdicts)

    def summary(self, run: str, policy: str = RECORDED) -> str:
        """``all_summary.txt`` of ``run`` as the upstream runner writes it, under ``policy``."""
        from scorelake.present import render_summary

        with self._reads.connection():
            policy_id = self._reads.policy_id(policy)
            info = self._reads.run(run)
            rows = self._reads.query("summary_scenarios", run_id=run, policy_id=policy_id).to_dicts()
        if info["status"] == "quarantined":
            raise InvalidArgument(f"run '{run}' is quarantined (see the `quarantined` view)")
        min_turns = rows[0]["min_agent_turns"] if rows else info["min_agent_turns"]
        return render_summary(rows, info["queued_count"], min_turns)

    def report(self, policy: str = RECORDED) -> str:
        """A self-contained HTML report: rates, response latency and the voice panel across runs, the
        latest run against the one before it in its group, stalled scenarios."""
        from scorelake.present import explain, render_report
        from scorelake.transforms.analysis import with_change_labels

        query = self._reads.query
        with self._reads.connection():
            policy_id = self._reads.policy_id(policy)
            runs = query("report_runs", policy_id=policy_id)
            if runs.is_empty():
                raise NotFound(f"no runs scored under policy '{policy}'")
            history = with_change_labels(query("report_history", policy_id=policy_id))
            latest = runs.row(-1, named=True)
            earlier = runs.filter(pl.col("run_group").eq_missing(latest["run_group"])).head(-1)
            comparison = self.compare(earlier["run_id"][-1], latest["run_id"], policy) if earlier.height else None
            stalled = query("report_stalled", policy_id=policy_id)
            latency = query("report_latency", policy_id=policy_id)
            latest_latency = query("latency", runs=[latest["run_id"]]).filter(pl.col("exchanges").is_not_null())
            voice = query("report_voice", policy_id=policy_id)
            linked = [(comparison.run_b, name) for name in comparison.broken] if comparison else []
            linked += [(r["run_id"], r["scenario_name"]) for r in stalled.iter_rows(named=True)]
            found = self._reading.evidence_of(list(dict.fromkeys(linked))[:REPORT_SCENARIO_PAGES], policy, policy_id)
            pages = {key: explain(evidence, limit=2000) for key, evidence in found.items()}
            headlines = self.headlines(policy=policy)
        return render_report(history, runs, comparison, stalled, policy, pages, latency, voice, latest_latency,
                             headlines)

    def latency(self, runs: Sequence[str] | None = None, by: Literal["domain", "scenario"] = "domain") -> pl.DataFrame:
        """The agent's response latency per run and domain (and the whole run, ``(all)``), or per
        scenario slowest first: exchanges measured, mean, p50, p90, p95, p99 and max (the runner's
        percentiles: the whole run's p50 and p95 are all_summary.txt's), the first response's latency,
        interrupted agent turns and their rate. NULL where a source records no latency."""
        _by("latency", by, BY_DOMAIN_OR_SCENARIO)
        with self._reads.connection():
            return self._reads.query("latency" if by == "domain" else "latency_scenarios",
                                     runs=self._reads.runs_known(runs))

    def voice(self, runs: Sequence[str] | None = None, by: Literal["domain", "scenario"] = "domain",
              policy: str = RECORDED) -> pl.DataFrame:
        """The voice panel (``transforms.columns.VOICE_METRICS``): per run and domain (and the whole
        run, ``(all)``) turn-taking from the speech segments, each direction's word error rate, the
        key entities misheard, every rate with its event count, and the failed scenarios by cause
        (recorded policy); or per scenario (``by="scenario"``) with its failure cause under ``policy``,
        the worst heard first. NULL where a scenario holds nothing to measure, never zero."""
        _by("voice", by, BY_DOMAIN_OR_SCENARIO)
        with self._reads.connection():
            known = self._reads.runs_known(runs)
            if by == "domain":
                return self._reads.query("voice", runs=known)
            return self._reads.query("voice_scenarios", runs=known, policy_id=self._reads.policy_id(policy))

    def voice_of(self, run: str, scenario: str) -> dict | None:
        """One scenario's voice row (``VOICE_COLUMNS``, its speech segments and what each side heard
        among them), or None where nothing was measured."""
        with self._reads.connection():
            self._reads.run(run)
            found = self._reads.query("scenario_voice", run_id=run, scenario=scenario)
        return found.row(0, named=True) if found.height else None

    def speech_timeline(self, run: str, scenario: str) -> SpeechTimeline | None:
        """One scenario's speech timeline, measured for drawing (lanes, where both speak, the long
        silences, the response events, the dead air at the end); None without speech segments."""
        from scorelake.transforms.voice import speech_timeline

        row = self.voice_of(run, scenario)
        return None if row is None else speech_timeline(row)

    def recording(self, run: str, scenario: str) -> Path | None:
        """Where a scenario's recording is (``conversation_log.wav`` in its folder of the run), when the
        ingest measured one and the run's folder on this machine still holds it as a regular file;
        else None."""
        from scorelake.transforms.sources.nemo import recording

        with self._reads.connection():
            found = self._reads.run(run)
            measured = self._reads.query("scenario_voice", run_id=run, scenario=scenario)
        if found["source"] != "nemo" or not measured.height or measured["audio_s"][0] is None:
            return None
        return recording(found["session_path"], scenario)

    def turns(self, runs: Sequence[str] | str | None = None) -> pl.DataFrame:
        """Every turn of many scenarios at once (of ``runs``, default all), in order: run, scenario,
        domain, ordinal, role, text, timestamp, and an agent turn's response latency."""
        with self._reads.connection():
            known = self._reads.runs_known([runs] if isinstance(runs, str) else runs)
            return self._reads.query("run_turns", runs=known)

    def latency_histogram(self, run: str, bins: int = 20) -> pl.DataFrame:
        """``run``'s response latencies in ``bins`` equal-width bins from 0 to its p99, and one open
        bin (``high_ms`` null) for the slower ones: bin, low_ms, high_ms, exchanges. Empty when the
        run records no latency."""
        if not 1 <= bins <= 1000:
            raise InvalidArgument(f"bins {bins}: between 1 and 1000")
        with self._reads.connection():
            self._reads.run(run)
            return self._reads.query("latency_histogram", run_id=run, bins=bins)

    def judge_scores(self, run: str, policy: str = RECORDED) -> pl.DataFrame:
        """``run``'s judge scores under ``policy`` per domain in ten bins of 0.1 (``bin`` 0-9), with
        the thresholds its scenarios are scored with: where the scores fall against the threshold."""
        with self._reads.connection():
            return self._reads.query("judge_score_histogram", run_id=run, policy_id=self._reads.scoped(policy, run))

    def slowest_exchanges(self, run: str, limit: int = 20) -> pl.DataFrame:
        """``run``'s slowest exchanges, slowest first: scenario, domain, the agent turn's ordinal and
        response latency, the user's words it answered and the agent's answer."""
        if limit < 1:
            raise InvalidArgument(f"limit {limit}: at least 1")
        with self._reads.connection():
            self._reads.run(run)
            return self._reads.query("slowest_exchanges", run_id=run, limit=limit)

    def cost(self, prices: Mapping[str, tuple[float, float]], runs: Sequence[str] | None = None) -> pl.DataFrame:
        """What the tokens of each run and domain cost, per side: ``prices`` maps ``agent``, ``user``
        and ``judge`` (every judge scorelake asked) to (input, output) prices per million tokens; a
        side without a price, or whose tokens the runs do not record, costs NULL."""
        unknown = sorted(set(prices) - set(COST_SIDES))
        if unknown:
            raise InvalidArgument(f"--price for {', '.join(unknown)}: price {', '.join(COST_SIDES)}")
        for side, pair in prices.items():
            for price in pair:
                check_range(f"price {side}", price, 0, MAX_PRICE)
        columns = []
        for side in COST_SIDES:
            price_in, price_out = prices.get(side, (None, None))
            cost = ((pl.col(f"{side}_prompt_tokens") * price_in + pl.col(f"{side}_completion_tokens") * price_out) / 1e6
                    if price_in is not None else pl.lit(None, pl.Float64))
            columns.append(cost.alias(f"{side}_cost"))
        with self._reads.connection():
            tokens = self._reads.query("cost_tokens", runs=self._reads.runs_known(runs))
        return tokens.with_columns(columns)
