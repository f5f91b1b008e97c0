"""The Python API: a warehouse opened by path or URL, its answers as Polars DataFrames.

Every ``scorelake`` command is a thin adapter over a method here. Reading imports neither Prefect
nor the scoring code; writing runs the flows in-process, or as Prefect flow runs when a Prefect
API is configured (or asked for).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Literal, Mapping, Sequence

import polars as pl

from scorelake.transforms.errors import InvalidArgument, NotFound, check_range
from scorelake.transforms.names import RECORDED, SCENARIO_SORTS
from scorelake.transforms.results import (
    CheckResult,
    Evidence,
    GateResult,
    IngestResult,
    RejudgeResult,
    RescoreResult,
    ReviewResult,
)
from scorelake.transforms.warehouse import Commit, QueryLimits, Store, fetch, sql_text

if TYPE_CHECKING:
    import duckdb

    from scorelake.transforms.analysis import Comparison, JudgeComparison

REPORT_SCENARIO_PAGES = 1000  # scenario sections a report carries at most (the rest: scorelake view)
COST_SIDES = ("agent", "user", "judge")  # whose tokens cost what (run_latency's token columns)
REVIEW_PICKS = ("errors", "disagree", "sample")  # what a review queue picks (review_queue.sql)
# What ``Warehouse.sql`` runs: one statement that reads (DuckDB parses DESCRIBE, SHOW, SUMMARIZE as SELECT).
READ_STATEMENTS = {"SELECT", "EXPLAIN"}


def _say_nothing(_: str) -> None:
    pass


MAX_PHRASE = 500  # characters of a search phrase


def _phrase(q: str | None) -> str | None:
    """A search phrase as the queries take it: None when empty; refused when longer than MAX_PHRASE."""
    if q is None or not q.strip():
        return None
    if len(q) > MAX_PHRASE:
        raise InvalidArgument(f"search phrase of {len(q)} characters: at most {MAX_PHRASE}")
    return q.strip()


class Warehouse:
    """A scorelake warehouse: ``scorelake.open(path_or_url, as_of=None)``.

    Reads answer as the warehouse stands now, or as it stood at ``as_of`` (a version that
    ``log()`` lists, or an ISO timestamp). Writes (``ingest``, ``rescore``, ``compact``) need the
    current version.
    """

    def __init__(self, location: str | Path | None = None, as_of: str | int | None = None, *,
                 memory_limit: str | None = None, timeout: float | None = None):
        self._store = Store(location, QueryLimits.of(memory_limit, timeout))
        self.as_of = None if as_of is None else str(as_of)
        if self.as_of is not None and not self.as_of.strip():
            raise InvalidArgument("as_of is empty: give a version (see `scorelake log`) or a timestamp")
        self._con: duckdb.DuckDBPyConnection | None = None

    @property
    def location(self) -> str:
        """The warehouse's absolute path, or its URL."""
        return self._store.location

    def __repr__(self) -> str:
        return f"scorelake.open({self.location!r}" + (f", as_of={self.as_of!r})" if self.as_of else ")")

    def exists(self) -> bool:
        return self._store.tables.exists()

    # ---- reading ----------------------------------------------------------------------------------
    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only DuckDB connection to the views (see the README's "Views"); nested uses share one."""
        if self._con is not None:
            yield self._con
            return
        self._store.tables.require()
        with self._store.views.connect(self.as_of) as con:
            self._con = con
            try:
                yield con
            finally:
                self._con = None

    def _query(self, name: str, **params: object) -> pl.DataFrame:
        with self.connection() as con:
            return self._store.views.query(con, name, **params)

    def _policy(self, policy: str) -> dict:
        found = self._query("policy", policy=policy)
        if found.is_empty():
            raise NotFound(f"no stored policy named '{policy}'")
        return found.row(0, named=True)

    def policy_id(self, policy: str = RECORDED) -> str:
        """The id of the stored policy named (or with the id) ``policy``."""
        return self._policy(policy)["policy_id"]

    def policy_judge(self, policy: str = RECORDED) -> str:
        """The judge whose judgements a stored policy's JUDGE_PASSED and NL_ASSERTION take."""
        return self._policy(policy)["judge"]

    def _scoped(self, policy: str, *runs: str | None) -> str:
        """The id of the stored policy ``policy``, once every run given (None: all runs) is known to exist."""
        policy_id = self.policy_id(policy)
        for run in runs:
            if run is not None:
                self.run(run)
        return policy_id

    def run(self, run: str) -> dict:
        """The committed ``runs`` row of ``run`` (its session directory or results file name)."""
        found = self._query("run", run_id=run)
        if found.is_empty():
            raise NotFound(f"no run '{run}' in {self.location}")
        return found.row(0, named=True)

    def sql(self, query: str, params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
        """Any read-only query over the views, with ``$name`` (a mapping) or ``?`` (a sequence) parameters."""
        import duckdb

        with self.connection() as con:
            try:
                statements = con.extract_statements(query)
                if len(statements) != 1 or statements[0].type.name not in READ_STATEMENTS:
                    raise InvalidArgument("one read-only query is allowed (SELECT, WITH, FROM, DESCRIBE, SHOW, "
                                          "SUMMARIZE, EXPLAIN): the warehouse cannot be changed from here")
                return fetch(con, query, params, self._store.views.limits.timeout_s)
            except duckdb.Error as exc:
                raise InvalidArgument(str(exc).splitlines()[0]) from None

    def runs(self) -> pl.DataFrame:
        """One row per committed run, oldest session first."""
        return self._query("runs")

    def scenarios(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """One row per scenario (of ``run``, or of every run) with its signals and verdicts under ``policy``:
        the ``scenario_scores`` view."""
        with self.connection():
            return self._query("scenarios", policy_id=self._scoped(policy, run), run_id=run)

    def verdicts(self, run: str | None = None, scenario: str | None = None, kind: str | None = None) -> pl.DataFrame:
        """Per-predicate and per-assertion verdicts (``kind``: db_state_assertion, nl_assertion, action, communicate)."""
        return self._query("verdicts", run_id=run, scenario=scenario, kind=kind)

    def run_scenarios(self, run: str, policy: str = RECORDED, *, failed_only: bool = False,
                      domain: str | None = None, signal: str | None = None, sort: str = "position",
                      limit: int = 100, offset: int = 0, q: str | None = None) -> pl.DataFrame:
        """One page of a run's scenarios under ``policy``, filtered in DuckDB: only the failed ones
        (the composite False), one domain, one failed signal (a ``success_breakdown`` name, or
        ``stalled``), those whose transcript, judge reason or tool calls hold the phrase ``q``
        (case-insensitive); sorted by ``position`` (the run's order), ``name``, ``domain``,
        ``judge_score``, ``agent_turns`` or ``outcome``. ``matching`` counts the rows the filters
        leave; ``judge_error`` marks a scenario whose judge failed (not the agent)."""
        if sort not in SCENARIO_SORTS:
            raise InvalidArgument(f"sort by '{sort}': choose one of {', '.join(SCENARIO_SORTS)}")
        with self.connection():
            policy_id = self._scoped(policy, run)
            return self._query("run_scenarios", run_id=run, policy_id=policy_id, failed_only=failed_only,
                               domain=domain, signal=signal, sort=sort, limit=max(int(limit), 0),
                               offset=max(int(offset), 0), q=_phrase(q))

    def search(self, q: str, run: str | None = None, policy: str = RECORDED, limit: int = 100) -> pl.DataFrame:
        """The scenarios (of ``run``, or of every run) whose transcript, judge reason or tool calls
        hold the phrase ``q`` (case-insensitive): run, scenario, domain, outcome, how many places
        hold it, where it was found first and the text around it."""
        phrase = _phrase(q)
        if phrase is None:
            raise InvalidArgument("search for what? give a phrase")
        with self.connection():
            policy_id = self._scoped(policy, run) if run else self.policy_id(policy)
            return self._query("search", q=phrase, run_id=run, policy_id=policy_id, limit=max(int(limit), 1))

    def judge_error_counts(self, policy: str = RECORDED) -> pl.DataFrame:
        """Per run, its scenarios whose judge failed under ``policy`` (``judge_errors``) and those the
        judge alone failed (``judge_only``); runs without any have no row."""
        with self.connection():
            return self._query("run_judge_errors", policy_id=self.policy_id(policy))

    def evidence(self, run: str, scenario: str, policy: str = RECORDED) -> Evidence:
        """Everything behind one scenario's verdict: its scored row, item verdicts, the judge's own
        result, the conversation and the tool calls."""
        with self.connection():
            return self._evidence(run, scenario, policy, self._scoped(policy, run))

    def _evidence(self, run: str, scenario: str, policy: str, policy_id: str) -> Evidence:
        """``evidence`` of a run and policy already known to exist (the report asks for many)."""
        with self.connection():
            found = self._query("scenario", run_id=run, scenario=scenario, policy_id=policy_id)
            if found.is_empty():
                raise NotFound(f"no scenario '{scenario}' in run '{run}' (under policy '{policy}')")
            row = found.row(0, named=True)
            judge = self._query("scenario_judge", run_id=run, scenario=scenario, judge=row["judge"])
            return Evidence(run, policy, row,
                            self._query("scenario_verdicts", run_id=run, scenario=scenario, judge=row["judge"]),
                            judge.row(0, named=True) if judge.height else None,
                            self._query("scenario_turns", run_id=run, scenario=scenario),
                            self._query("scenario_tool_calls", run_id=run, scenario=scenario),
                            self._query("scenario_reviews", run_id=run, scenario=scenario))

    def rates(self, by: Literal["domain", "signal"] = "domain", run: str | None = None,
              policy: str = RECORDED) -> pl.DataFrame:
        """Success, task-success and per-signal rates per run and domain, or per run and signal."""
        if by not in ("domain", "signal"):
            raise InvalidArgument(f"rates by '{by}': choose domain or signal")
        with self.connection():
            policy_id = self._scoped(policy, run)
            return self._query(f"rates_by_{by}", policy_id=policy_id, run_id=run)

    def judge_errors(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """The scenarios whose LLM judge failed (upstream scored them 0.0), with ``judge_only`` where
        the judge's signals are all that failed them: judge outages that read as agent failures."""
        with self.connection():
            policy_id = self._scoped(policy, run)
            return self._query("judge_errors", policy_id=policy_id, run_id=run)

    def compare(self, run_a: str, run_b: str, policy: str = RECORDED, *, alpha: float = 0.05,
                all_scenarios: bool = False) -> Comparison:
        """Run B against baseline A, like with like: the scenarios both ran with the same definition,
        paired; per domain the rates with intervals, the delta with its interval, an exact McNemar
        test labelling the change (improved, regressed, inconclusive, unchanged at ``alpha``) and the
        smallest difference the pairs could detect; apart, the scenarios only in A or only in B, the
        definitions that changed and whether the judge or the scoring flags differ. ``all_scenarios``:
        each run's rates over all its scenarios, every scenario both have paired by name."""
        from scorelake.transforms.pipeline import comparison

        with self.connection() as con:
            return comparison(self._store, con, run_a, run_b, self._scoped(policy, run_a, run_b), alpha, all_scenarios)

    def gate(self, base: str, candidate: str, policy: str = RECORDED, *, alpha: float = 0.05, max_drop: float = 0.0,
             domains: Sequence[str] = (), max_p95_rise: float | None = None, max_overlap_rise: float | None = None,
             max_wer_rise: float | None = None) -> GateResult:
        """Whether ``candidate`` may replace ``base``: it fails when a domain (of ``domains``, default
        every one) or the whole run regressed beyond the noise (McNemar at ``alpha`` on the scenarios
        both ran with the same definition) by more than ``max_drop`` points, or (``max_p95_rise``)
        when its p95 response latency rose by more than that many milliseconds, or
        (``max_overlap_rise``) its mean overlap of speech per scenario by more than that many seconds,
        or (``max_wer_rise``) the word error rate of what its agent heard by more than that many points."""
        from scorelake.transforms.pipeline import gate

        return gate(self.compare(base, candidate, policy, alpha=alpha), max_drop, domains, max_p95_rise,
                    max_overlap_rise, max_wer_rise)

    def passk(self, group: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """pass^k per run group and domain, recomputed and claimed side by side."""
        return self._query("passk", policy_id=self.policy_id(policy), run_group=group)

    def history(self, domain: str = "(all)", policy: str = RECORDED, *, alpha: float = 0.05) -> pl.DataFrame:
        """Composite and task rates across runs in session order, for one domain or the whole run,
        with the response latency's p50 and p95 and each run's change from the run before it in its
        group: the paired scenarios (same definition), broken, fixed, the exact McNemar p-value and
        ``change`` (improved, regressed, inconclusive or unchanged: never regressed within the noise)."""
        from scorelake.transforms.analysis import with_change_labels

        with self.connection():
            return with_change_labels(self._query("history", policy_id=self.policy_id(policy), domain=domain), alpha)

    def flaky(self, run: str | None = None, group: str | None = None, policy: str = RECORDED, *,
              min_verdicts: int = 2) -> pl.DataFrame:
        """The tasks whose verdict both passed and failed across the comparable runs (and trials) of
        their group, most often flipping first: of ``run``'s group and run in it, of one ``group``, or
        of every group. verdicts, runs, passed, failed, flips and flip_rate (flips per verdict after the first)."""
        if min_verdicts < 2:
            raise InvalidArgument(f"min_verdicts {min_verdicts}: at least 2 (one verdict cannot flip)")
        with self.connection():
            if run is not None:
                self.run(run)
            return self._query("flaky", policy_id=self.policy_id(policy), run_id=run, run_group=group,
                               min_verdicts=min_verdicts)

    def policies(self) -> pl.DataFrame:
        """Stored policies, ``recorded`` first: id, name and every field (None: each run's own flag;
        ``whitelists`` as JSON, domain to signals)."""
        stored = self._query("policies")
        specs = [json.loads(spec) for spec in stored["spec_json"]]
        return pl.DataFrame([{"policy_id": pid, **spec, "judge": judge, "reviews": reviews,
                              "whitelists": json.dumps(spec["whitelists"], sort_keys=True)}
                             for pid, judge, reviews, spec in zip(stored["policy_id"], stored["judge"],
                                                                  stored["reviews"], specs)])

    def summary(self, run: str, policy: str = RECORDED) -> str:
        """``all_summary.txt`` of ``run`` as the upstream runner writes it, under ``policy``."""
        from scorelake.transforms.render import render_summary

        with self.connection():
            policy_id = self.policy_id(policy)
            info = self.run(run)
            rows = self._query("summary_scenarios", run_id=run, policy_id=policy_id).to_dicts()
        if info["status"] == "quarantined":
            raise InvalidArgument(f"run '{run}' is quarantined (see the `quarantined` view)")
        min_turns = rows[0]["min_agent_turns"] if rows else info["min_agent_turns"]
        return render_summary(rows, info["queued_count"], min_turns)

    def report(self, policy: str = RECORDED) -> str:
        """A self-contained HTML report: rates, response latency and the voice panel across runs, the
        latest run against the one before it in its group, stalled scenarios."""
        from scorelake.transforms.analysis import with_change_labels
        from scorelake.transforms.render import explain, render_report

        with self.connection():
            policy_id = self.policy_id(policy)
            runs = self._query("report_runs", policy_id=policy_id)
            if runs.is_empty():
                raise NotFound(f"no runs scored under policy '{policy}'")
            history = with_change_labels(self._query("report_history", policy_id=policy_id))
            latest = runs.row(-1, named=True)
            earlier = runs.filter(pl.col("run_group").eq_missing(latest["run_group"])).head(-1)
            comparison = self.compare(earlier["run_id"][-1], latest["run_id"], policy) if earlier.height else None
            stalled = self._query("report_stalled", policy_id=policy_id)
            latency = self._query("report_latency", policy_id=policy_id)
            voice = self._query("report_voice", policy_id=policy_id)
            linked = [(comparison.run_b, name) for name in comparison.broken] if comparison else []
            linked += [(r["run_id"], r["scenario_name"]) for r in stalled.iter_rows(named=True)]
            pages = {key: explain(self._evidence(*key, policy, policy_id), limit=2000)
                     for key in list(dict.fromkeys(linked))[:REPORT_SCENARIO_PAGES]}
        return render_report(history, runs, comparison, stalled, policy, pages, latency, voice)

    def log(self) -> list[Commit]:
        """Every write step, oldest first: its version (an ``as_of``), time, what it did, table versions."""
        self._store.tables.require()
        return self._store.log.entries()

    def versions(self) -> pl.DataFrame:
        """``log()`` as a table: version, committed_at, operation, detail, table_versions (JSON)."""
        return pl.DataFrame([{"version": c.version, "committed_at": c.committed_at, "operation": c.operation,
                              "detail": c.detail, "table_versions": json.dumps(c.table_versions, sort_keys=True)}
                             for c in self.log()],
                            schema={"version": pl.Int64, "committed_at": pl.Datetime("us", "UTC"),
                                    "operation": pl.String, "detail": pl.String, "table_versions": pl.String})

    def check(self) -> CheckResult:
        """Verify the committed state: every run's rows complete, every stored policy scored; warn of
        tau2 task ids that contradict their task, and of a warehouse moved or copied since its view
        database was written (consistent: reads bind this warehouse's own files)."""
        from scorelake.transforms.pipeline import verify
        from scorelake.transforms.sources import task_id_warnings

        self._store.tables.require()
        store = self._store
        runs = store.tables.committed_runs()
        moved = store.views.moved()
        warnings = [f"{run_id}: {warning}" for run_id, warning in
                    task_id_warnings(store.tables.scan("scenarios", runs)).items()] + ([moved] if moved else [])
        return CheckResult(runs.height, verify(store), warnings)

    # ---- writing ----------------------------------------------------------------------------------
    def _writable(self) -> None:
        if self.as_of is not None:
            raise InvalidArgument(f"this warehouse is opened as of {self.as_of}: writes need the current version")

    def migrate(self) -> Path | None:
        """Convert a warehouse of scorelake's former table format to Delta tables; returns where the
        former files were kept (None: nothing to convert). Write methods do it first themselves."""
        from scorelake.flows import flow_bodies

        self._writable()
        return flow_bodies.migrate(self._store)

    def ingest(self, paths: Sequence[str | Path] | str | Path | None = None, *, force: bool = False,
               group: str | None = None, task_runner: str = "auto", dask_address: str | None = None,
               prefect: bool | None = None, verbose: bool = False, progress: bool = False,
               say: Callable[[str], None] = _say_nothing) -> IngestResult:
        """Ingest new or changed runs under ``paths`` (default ``data/runs``): voice-agent session
        folders or folders of them, tau2-bench / tau-bench results. Returns what was ingested,
        unchanged and refused, and how the flow ran. ``prefect``: None runs a Prefect flow when an
        API is configured, True always, False never. ``say`` gets lines meant for the user."""
        from scorelake.flows import runtime
        from scorelake.transforms.sources import DEFAULT_RUNS

        self._writable()
        if isinstance(paths, (str, Path)):
            paths = [paths]
        roots = [Path(p) for p in paths] if paths else [Path(DEFAULT_RUNS)]  # under the current directory
        for root in roots:
            if not root.exists():
                raise InvalidArgument(f"{root}: no such file or directory")
        if dask_address:
            _require_answering(dask_address)
            task_runner = "dask"
        converted = self.migrate()
        result, ran = runtime.run("ingest", prefect, verbose, say, task_runner, dask_address,
                                  runs_dirs=[str(p.absolute()) for p in roots], warehouse=self.location, force=force,
                                  progress=progress, group=group)
        result.converted, result.ran = converted and str(converted), ran.describe()
        return result

    def define_policy(self, name: str | None = None, *, judge_threshold: float | None = None,
                      min_agent_turns: int | None = None, strict_match: bool | None = None,
                      judge_enabled: bool | None = None, judge: str | None = None,
                      whitelists: Mapping[str, Sequence[str]] | None = None, reviews: bool = False):
        """The policy to score under: the stored one named ``name`` when no flag is given, else a
        policy of those flags (named ``name``, or after its id). ``judge``: the judge (see ``rejudge``)
        whose judgements JUDGE_PASSED and NL_ASSERTION take. Nothing is stored yet."""
        from scorelake.transforms.pipeline import check_policy, check_whitelisted_domains, find_judge, find_policy
        from scorelake.transforms.scoring import Policy

        flags = {"judge_threshold": judge_threshold, "min_agent_turns": min_agent_turns,
                 "strict_match": strict_match, "judge_enabled": judge_enabled, "judge": judge,
                 "whitelists": dict(whitelists or {}), "reviews": reviews or None}
        defined = {k: v for k, v in flags.items() if v not in (None, {})}
        if not defined:
            if not name:
                raise InvalidArgument("give a policy name and/or the flags that define a policy")
            return find_policy(self._store, name)
        policy = Policy.checked(name, **defined)
        if policy.judge:
            find_judge(self._store, policy.judge)
        check_policy(self._store, policy)
        check_whitelisted_domains(self._store, policy)
        return policy

    def rescore(self, policy: str | None = None, *, judge_threshold: float | None = None,
                min_agent_turns: int | None = None, strict_match: bool | None = None,
                judge_enabled: bool | None = None, judge: str | None = None,
                whitelists: Mapping[str, Sequence[str]] | None = None, reviews: bool = False,
                runs: Sequence[str] | None = None, prefect: bool | None = None, verbose: bool = False,
                say: Callable[[str], None] = _say_nothing) -> RescoreResult:
        """Define (or reuse) a policy and score stored runs (``runs``, default all) under it from the
        tables alone: a ``RescoreResult`` (the policy's name and id, the scenarios scored). Under a
        ``judge``, every stored judge input in scope must have been judged by it (``rejudge``). With
        ``reviews``, people's standing verdicts (``review``) take the place of what they review; a
        policy that takes reviews re-scores the runs reviewed since, each time it is run again."""
        from scorelake.flows import runtime
        from scorelake.transforms.pipeline import require_judged

        self._writable()
        converted = self._ready_to_write()
        chosen = self.define_policy(policy, judge_threshold=judge_threshold, min_agent_turns=min_agent_turns,
                                    strict_match=strict_match, judge_enabled=judge_enabled, judge=judge,
                                    whitelists=whitelists, reviews=reviews)
        require_judged(self._store, chosen, list(runs) if runs else None)
        result, ran = runtime.run("rescore", prefect, verbose, say, warehouse=self.location,
                                  policy_specs=[chosen.spec_json()], run_ids=list(runs) if runs else None)
        result.policy, result.policy_id, result.judge = chosen.name, chosen.id, chosen.judge or RECORDED
        result.converted, result.ran = converted and str(converted), ran.describe()
        return result

    def _ready_to_write(self) -> Path | None:
        """A warehouse of the former format converted (where its files were kept, or None), there,
        and with the tables of this scorelake declared (a warehouse written by an older one lacks some)."""
        from scorelake.flows import flow_bodies

        converted = self.migrate()
        self._store.tables.require()
        flow_bodies.prepare(self._store)
        return converted

    def rejudge(self, judge: str, *, url: str | None = None, model: str | None = None, prompt: str | None = None,
                max_tokens: int | None = None, temperature: float | None = None, top_p: float | None = None,
                seed: int | None = None, thinking_token_budget: int | None = None, timeout: float | None = None,
                runs: Sequence[str] | None = None, only_errors: bool = False, base: str | None = None,
                concurrency: int = 8, api_key_env: str | None = None, retries: int = 5, backoff: float = 0.5,
                prefect: bool | None = None, verbose: bool = False, progress: bool = False,
                say: Callable[[str], None] = _say_nothing) -> RejudgeResult:
        """Ask the judge ``judge`` about every stored judge input (of ``runs``, default all) it has
        not judged, through an OpenAI-compatible chat-completions ``url`` (default: each run's own
        --judge-url; likewise ``model`` and the sampling settings), with upstream's payload; the key
        from ``$JUDGE_API_KEY`` or ``api_key_env``. ``prompt`` replaces the system prompt. A new judge
        takes over the judgements of ``base`` that did not fail (``only_errors`` without a ``base``:
        ``recorded``); ``only_errors`` also asks its own failed ones again. Answers to identical
        requests are never paid twice. A call that fails for a passing reason (429, 5xx, a timeout, a
        dropped connection) is tried ``retries`` more times, waiting ``backoff`` seconds doubled each
        time (or as Retry-After says). Returns counts of what was asked, taken over and failed."""
        from scorelake.flows import runtime
        from scorelake.transforms.pipeline import define_judge

        self._writable()
        if not 1 <= concurrency <= 1024:
            raise InvalidArgument(f"--concurrency: between 1 and 1024 calls at once (got {concurrency})")
        if not 0 <= retries <= 100 or not 0 <= backoff <= 600:
            raise InvalidArgument(f"--retries 0 to 100 and --backoff 0 to 600 seconds (got {retries}, {backoff})")
        converted = self._ready_to_write()
        spec = define_judge(self._store, judge, default_base=base or (RECORDED if only_errors else None), url=url,
                            model=model, prompt=prompt, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                            seed=seed, thinking_token_budget=thinking_token_budget, timeout=timeout, base=base)
        result, ran = runtime.run("rejudge", prefect, verbose, say, warehouse=self.location,
                                  spec_json=spec.model_dump_json(), run_ids=list(runs) if runs else None,
                                  only_errors=only_errors, concurrency=concurrency, api_key_env=api_key_env,
                                  retries=retries, backoff=backoff, progress=progress)
        result.converted, result.ran = converted and str(converted), ran.describe()
        return result

    # ---- voice analytics --------------------------------------------------------------------------
    def latency(self, runs: Sequence[str] | None = None, by: Literal["domain", "scenario"] = "domain") -> pl.DataFrame:
        """The agent's response latency per run and domain (and the whole run, ``(all)``), or per
        scenario slowest first: exchanges measured, mean, p50, p90, p95, p99 and max (the runner's
        percentiles: the whole run's p50 and p95 are all_summary.txt's), the first response's latency,
        interrupted agent turns and their rate. NULL where a source records no latency."""
        if by not in ("domain", "scenario"):
            raise InvalidArgument(f"latency by '{by}': choose domain or scenario")
        with self.connection():
            for run in runs or ():
                self.run(run)
            return self._query("latency" if by == "domain" else "latency_scenarios", runs=list(runs) if runs else None)

    def voice(self, runs: Sequence[str] | None = None, by: Literal["domain", "scenario"] = "domain",
              policy: str = RECORDED) -> pl.DataFrame:
        """The voice panel (``transforms.columns.VOICE_COLUMNS``): per run and domain (and the whole
        run, ``(all)``) turn-taking from the speech segments, each direction's word error rate, the
        key entities misheard, every rate with its event count, and the failed scenarios by cause
        (recorded policy); or per scenario (``by="scenario"``) with its failure cause under ``policy``,
        the worst heard first. NULL where a scenario holds nothing to measure, never zero."""
        if by not in ("domain", "scenario"):
            raise InvalidArgument(f"voice by '{by}': choose domain or scenario")
        with self.connection():
            for run in runs or ():
                self.run(run)
            if by == "domain":
                return self._query("voice", runs=list(runs) if runs else None)
            return self._query("voice_scenarios", runs=list(runs) if runs else None, policy_id=self.policy_id(policy))

    def voice_of(self, run: str, scenario: str) -> dict | None:
        """One scenario's voice row (``VOICE_COLUMNS``, its speech segments and what each side heard
        among them), or None where nothing was measured."""
        with self.connection():
            self.run(run)
            found = self._query("scenario_voice", run_id=run, scenario=scenario)
        return found.row(0, named=True) if found.height else None

    def turns(self, runs: Sequence[str] | str | None = None) -> pl.DataFrame:
        """Every turn of many scenarios at once (of ``runs``, default all), in order: run, scenario,
        domain, ordinal, role, text, timestamp, and an agent turn's response latency."""
        runs = [runs] if isinstance(runs, str) else runs
        with self.connection():
            for run in runs or ():
                self.run(run)
            return self._query("run_turns", runs=list(runs) if runs else None)

    def latency_histogram(self, run: str, bins: int = 20) -> pl.DataFrame:
        """``run``'s response latencies in ``bins`` equal-width bins from 0 to its p99, and one open
        bin (``high_ms`` null) for the slower ones: bin, low_ms, high_ms, exchanges. Empty when the
        run records no latency."""
        if not 1 <= bins <= 1000:
            raise InvalidArgument(f"bins {bins}: between 1 and 1000")
        with self.connection():
            self.run(run)
            return self._query("latency_histogram", run_id=run, bins=bins)

    def slowest_exchanges(self, run: str, limit: int = 20) -> pl.DataFrame:
        """``run``'s slowest exchanges, slowest first: scenario, domain, the agent turn's ordinal and
        response latency, the user's words it answered and the agent's answer."""
        if limit < 1:
            raise InvalidArgument(f"limit {limit}: at least 1")
        with self.connection():
            self.run(run)
            return self._query("slowest_exchanges", run_id=run, limit=limit)

    def cost(self, prices: Mapping[str, tuple[float, float]], runs: Sequence[str] | None = None) -> pl.DataFrame:
        """What the tokens of each run and domain cost, per side: ``prices`` maps ``agent``, ``user``
        and ``judge`` (every judge scorelake asked) to (input, output) prices per million tokens; a
        side without a price, or whose tokens the runs do not record, costs NULL."""
        unknown = sorted(set(prices) - set(COST_SIDES))
        if unknown:
            raise InvalidArgument(f"--price for {', '.join(unknown)}: price {', '.join(COST_SIDES)}")
        for side, pair in prices.items():
            for price in pair:
                check_range(f"price {side}", price, 0)
        columns = []
        for side in COST_SIDES:
            price_in, price_out = prices.get(side, (None, None))
            cost = ((pl.col(f"{side}_prompt_tokens") * price_in + pl.col(f"{side}_completion_tokens") * price_out) / 1e6
                    if price_in is not None else pl.lit(None, pl.Float64))
            columns.append(cost.alias(f"{side}_cost"))
        with self.connection():
            for run in runs or ():
                self.run(run)
            tokens = self._query("cost_tokens", runs=list(runs) if runs else None)
        return tokens.with_columns(columns)

    # ---- people's verdicts ------------------------------------------------------------------------
    def review(self, run: str, scenario: str, signal: str, verdict: str | None = None, *, assertion: int | None = None,
               reviewer: str | None = None, note: str | None = None, withdraw: bool = False) -> ReviewResult:
        """Record a person's verdict (``pass`` or ``fail``) on one signal of a scenario (a
        ``success_breakdown`` name, or ``is_successful`` for the composite), or on one NL assertion
        or DB predicate (``assertion``: its number); ``withdraw`` takes the standing one back. The
        reviewer defaults to ``$SCORELAKE_REVIEWER``, else the login name. Nothing is overwritten:
        a later review of the same key supersedes this one. Policies that take reviews
        (``rescore(..., reviews=True)``) count it once re-scored."""
        from scorelake.transforms.pipeline import Review

        if withdraw == (verdict is not None):
            raise InvalidArgument("give a verdict (pass or fail), or withdraw the standing one")
        if verdict is not None and str(verdict).lower() not in ("pass", "fail"):
            raise InvalidArgument(f"nothing stored: verdict '{str(verdict)[:40]}': pass or fail (withdraw takes the "
                                  "standing one back)")
        given = Review(run, scenario, signal, "withdrawn" if withdraw else str(verdict).lower(),
                       _reviewer(reviewer), assertion, note or None)
        return self._store_reviews([given])

    def import_reviews(self, path: str | Path, reviewer: str | None = None) -> ReviewResult:
        """Record the reviews of a CSV file (header: run_id, scenario_name, signal, verdict, and
        optionally assertion, reviewer, note) or a JSON Lines file, in one write step: a file with
        any bad line stores nothing, and the error names every bad line."""
        from scorelake.transforms.pipeline import read_review_file

        reviews, unreadable = read_review_file(Path(path), _reviewer(reviewer))
        return self._store_reviews(reviews, unreadable, f"{path}: ")

    def _store_reviews(self, reviews: list, unreadable: Sequence[str] = (), source: str = "") -> ReviewResult:
        from scorelake.transforms.pipeline import check_reviews, describe_reviews, store_reviews

        self._writable()
        self._ready_to_write()
        problems = sorted([*unreadable, *check_reviews(self._store, reviews)],
                          key=lambda p: int(p.split(":")[0].removeprefix("line ")) if p.startswith("line ") else 0)
        if problems:
            raise InvalidArgument(f"{source}nothing stored: " + (
                problems[0] if len(problems) == 1 else f"{len(problems)} bad lines:\n" + "\n".join(problems)))
        if not reviews:
            raise InvalidArgument(f"{source}no review to store")
        return ReviewResult(len(reviews), *store_reviews(self._store, reviews, describe_reviews(reviews)))

    def reviews(self, run: str | None = None, history: bool = False) -> pl.DataFrame:
        """The reviews that stand (one per run, scenario, signal and assertion), or every review
        ever made (``history``: superseded and withdrawn ones too, ``standing`` saying which stand)."""
        with self.connection():
            if run is not None:
                self.run(run)
            found = self._query("reviews", run=run, history=history)
        return found if history else found.drop("standing")

    def review_queue(self, pick: str = "errors", run: str | None = None, policy: str = RECORDED, *,
                     judges: Sequence[str] = (), seed: int = 0, per_domain: int = 5, limit: int = 200) -> pl.DataFrame:
        """What to review next: the scenarios whose judge failed (``errors``), those two stored
        ``judges`` disagree on (``disagree``), or a random sample of ``per_domain`` per domain, the
        same for the same ``seed`` (``sample``: two reviewers can split one); of ``run`` or all runs,
        under ``policy``. Scenarios nobody has reviewed come first (``reviews``: how many they have)."""
        if pick not in REVIEW_PICKS:
            raise InvalidArgument(f"pick '{pick}': one of {', '.join(REVIEW_PICKS)}")
        if pick == "disagree" and len(judges) != 2:
            raise InvalidArgument("disagree: name the two judges whose verdicts differ (judges=[A, B])")
        with self.connection() as con:
            policy_id = self._scoped(policy, run)
            params = {"run": run, "policy_id": policy_id, "limit": max(int(limit), 0)}
            if pick == "disagree":
                params.update(judge_a=judges[0], judge_b=judges[1])
            if pick == "sample":
                params.update(seed=int(seed), per_domain=max(int(per_domain), 1))
            draw = "hash($seed, {0}.run_id, {0}.scenario_name)" if pick == "sample" else "{0}.run_id"
            parts = {"picks": sql_text("queries", f"review_pick_{pick}.sql"), "draw_p": draw.format("p"),
                     "draw_q": draw.format("q")}
            return self._store.views.query(con, "review_queue", parts, **params)

    def judges(self, price_in: float | None = None, price_out: float | None = None) -> pl.DataFrame:
        """Every judge (``recorded`` first) with its coverage of the stored judge inputs, error rate,
        calls, retries, tokens and latency; ``cost`` from prices per million input / output tokens."""
        check_range("price-in", price_in, 0)
        check_range("price-out", price_out, 0)
        found = self._query("judges")
        cost = None
        if price_in is not None or price_out is not None:
            cost = (pl.col("prompt_tokens").fill_null(0) * (price_in or 0)
                    + pl.col("completion_tokens").fill_null(0) * (price_out or 0)) / 1e6
        return found.with_columns(cost=cost if cost is not None else pl.lit(None, pl.Float64))

    def compare_judges(self, judge_a: str, judge_b: str, runs: Sequence[str] | None = None,
                       threshold: float | None = None, *, others: Sequence[str] = (),
                       sweep: bool = False) -> JudgeComparison:
        """Judge B against judge A on the scenarios both judged: per domain, agreement on JUDGE_PASSED
        (at ``threshold``, else each run's own) and on each NL assertion, Cohen's kappa with a 95%
        interval, the mean score difference, and every flipped verdict. ``human`` is people's standing
        reviews: against it, the other judge's precision and recall, and with ``sweep`` the agreement
        of each candidate threshold and the best one. With ``others``, Krippendorff's alpha over all."""
        from scorelake.transforms.analysis import HUMAN, compare_judges

        if threshold is not None and not 0 <= threshold <= 1:
            raise InvalidArgument(f"--threshold: between 0 and 1 (got {threshold})")
        judges = [judge_a, judge_b, *others]
        if len(set(judges)) < len(judges):
            raise InvalidArgument(f"each judge once: {', '.join(judges)}")
        if sweep and HUMAN not in (judge_a, judge_b):
            raise InvalidArgument(f"--sweep measures a judge's thresholds against people: compare it with '{HUMAN}'")
        with self.connection():
            known = {*self._query("judges")["judge"], HUMAN}
            for name in judges:
                if name not in known:
                    raise NotFound(f"no judge named '{name}' (judges: {', '.join(sorted(known))})")
            for run in runs or ():
                self.run(run)
            verdicts = self._query("judge_verdicts", judges=judges, runs=list(runs) if runs else None,
                                   threshold=threshold)
        return compare_judges(judges, verdicts, sweep)

    def compact(self) -> None:
        """Drop rows of replaced ingests, bin-pack small files, vacuum files older than the history kept."""
        from scorelake.flows import flow_bodies

        self._writable()
        self.migrate()
        flow_bodies.compact(self._store)

    def serve(self, runs_dirs: Sequence[str | Path], *, cron: str | None = None, interval: float | None = None,
              name: str = "scheduled", notify_url: str | None = None, max_drop: float = 0.0, verbose: bool = False,
              say: Callable[[str], None] = _say_nothing) -> None:
        """Serve the Prefect deployment ``scorelake-refresh/<name>``: on the schedule (``cron`` or
        ``interval`` seconds, exactly one), ingest what is new under ``runs_dirs``, re-score every
        stored policy, and gate each new run on the run before it in its group (a Prefect artifact;
        a regression beyond ``max_drop`` points POSTed to ``notify_url``, a Slack-compatible
        incoming webhook). Needs a running Prefect server (``PREFECT_API_URL``); runs until stopped."""
        from scorelake.flows import runtime

        self._writable()
        if (cron is None) == (interval is None):
            raise InvalidArgument("give exactly one of --cron or --interval")
        check_range("interval", interval, 1)  # seconds
        check_range("max-drop", max_drop, 0, 100)  # points
        if notify_url is not None and not notify_url.startswith(("http://", "https://")):
            raise InvalidArgument(f"--notify-url: an http:// or https:// URL (got '{notify_url}')")
        runtime.serve([str(Path(p).resolve()) for p in runs_dirs], self.location, name, cron, interval, verbose, say,
                      notify_url, max_drop)


def _require_answering(address: str, timeout_s: float = 5.0) -> None:
    """A Dask scheduler ``tcp://host:port`` that accepts a connection, or a clear error (Prefect's
    engine would wait 30 s, then fail the flow with a traceback)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or not port:
        raise InvalidArgument(f"--dask-address {address}: expected tcp://HOST:PORT")
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout_s).close()
    except OSError as exc:
        raise InvalidArgument(f"--dask-address {address} does not answer ({exc.strerror or exc})") from None


def _reviewer(given: str | None) -> str:
    """Who reviews: as given, else ``$SCORELAKE_REVIEWER``, else the login name."""
    import getpass
    import os

    name = (given or os.environ.get("SCORELAKE_REVIEWER") or "").strip()
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            raise InvalidArgument("no reviewer: give --reviewer NAME or set SCORELAKE_REVIEWER") from None
    return name


def open(location: str | Path | None = None, as_of: str | int | None = None, *,  # noqa: A001
         memory_limit: str | None = None, timeout: float | None = None) -> Warehouse:
    """The warehouse at ``location`` (a directory, relative to the current one, or a URL such as
    ``s3://bucket/prefix``; default ``$SCORELAKE_WAREHOUSE``, else ``data/warehouse``), as it
    stands, or as it stood at ``as_of`` (a version or an ISO timestamp). Its queries may take
    ``memory_limit`` (DuckDB's, e.g. "4GB") and ``timeout`` seconds each (defaults: see ``QueryLimits``)."""
    return Warehouse(location, as_of, memory_limit=memory_limit, timeout=timeout)

