"""Reading the warehouse: runs, scenarios, verdicts, a run's pages, search, one scenario's evidence,
and any read-only SQL over the views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from scorelake._services._reads import Reads
from scorelake.storage import fetch
from scorelake.transforms.errors import InvalidArgument, NotFound, did_you_mean
from scorelake.transforms.names import RECORDED, SCENARIO_SORTS
from scorelake.transforms.results import (
    Evidence,
    HeardTurns,
    ItemVerdict,
    JudgeInput,
    Judgement,
    StandingReview,
    Task,
    ToolCall,
    Turn,
    ScenarioRow,
    records,
)

# What ``sql`` runs: one statement that reads (DuckDB parses DESCRIBE, SHOW, SUMMARIZE as SELECT).
READ_STATEMENTS = {"SELECT", "EXPLAIN"}
MAX_PHRASE = 500  # characters of a search phrase


def _phrase(q: str | None) -> str | None:
    """A search phrase as the queries take it: None when empty; refused when longer than MAX_PHRASE."""
    if q is None or not q.strip():
        return None
    if len(q) > MAX_PHRASE:
        raise InvalidArgument(f"search phrase of {len(q)} characters: at most {MAX_PHRASE}")
    return q.strip()


class Reading:
    def __init__(self, reads: Reads):
        self._reads = reads

    def policy_id(self, policy: str = RECORDED) -> str:
        """The id of the stored policy named (or with the id) ``policy``."""
        return self._reads.policy_id(policy)

    def policy_judge(self, policy: str = RECORDED) -> str:
        """The judge whose judgements a stored policy's JUDGE_PASSED and NL_ASSERTION take."""
        return self._reads.policy(policy)["judge"]

    def run(self, run: str) -> dict:
        """The committed ``runs`` row of ``run`` (its session directory or results file name)."""
        return self._reads.run(run)

    def sql(self, query: str, params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
        """Any read-only query over the views, with ``$name`` (a mapping) or ``?`` (a sequence) parameters."""
        import duckdb

        with self._reads.connection() as con:
            try:
                statements = con.extract_statements(query)
                if len(statements) != 1 or statements[0].type.name not in READ_STATEMENTS:
                    raise InvalidArgument("one read-only query is allowed (SELECT, WITH, FROM, DESCRIBE, SHOW, "
                                          "SUMMARIZE, EXPLAIN): the warehouse cannot be changed from here")
                return fetch(con, query, params, self._reads.store.views.limits.timeout_s)
            except duckdb.Error as exc:
                raise InvalidArgument(str(exc).splitlines()[0]) from None

    def runs(self) -> pl.DataFrame:
        """One row per committed run, oldest session first."""
        return self._reads.query("runs")

    def scenarios(self, run: str | None = None, policy: str = RECORDED) -> pl.DataFrame:
        """One row per scenario (of ``run``, or of every run) with its signals and verdicts under ``policy``:
        the ``scenario_scores`` view."""
        with self._reads.connection():
            return self._reads.query("scenarios", policy_id=self._reads.scoped(policy, run), run_id=run)

    def verdicts(self, run: str | None = None, scenario: str | None = None, kind: str | None = None) -> pl.DataFrame:
        """Per-predicate and per-assertion verdicts (``kind``: db_state_assertion, nl_assertion, action,
        communicate)."""
        return self._reads.query("verdicts", run_id=run, scenario=scenario, kind=kind)

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
        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            return self._reads.query("run_scenarios", run_id=run, policy_id=policy_id, failed_only=failed_only,
                                     domain=domain, signal=signal, sort=sort, limit=max(int(limit), 0),
                                     offset=max(int(offset), 0), q=_phrase(q))

    def search(self, q: str, run: str | None = None, policy: str = RECORDED, limit: int = 100) -> pl.DataFrame:
        """The scenarios (of ``run``, or of every run) whose transcript, judge reason or tool calls
        hold the phrase ``q`` (case-insensitive): run, scenario, domain, outcome, how many places
        hold it, where it was found first and the text around it."""
        phrase = _phrase(q)
        if phrase is None:
            raise InvalidArgument("search for what? give a phrase")
        with self._reads.connection():
            policy_id = self._reads.scoped(policy, run)
            return self._reads.query("search", q=phrase, run_id=run, policy_id=policy_id, limit=max(int(limit), 1))

    def evidence(self, run: str, scenario: str, policy: str = RECORDED) -> Evidence:
        """Everything behind one scenario's verdict: its scored row, item verdicts, the judge's own
        result, the conversation and the tool calls."""
        with self._reads.connection():
            return self.evidence_under(run, scenario, policy, self._reads.scoped(policy, run))

    def evidence_under(self, run: str, scenario: str, policy: str, policy_id: str) -> Evidence:
        """``evidence`` of a run and policy already known to exist."""
        found = self.evidence_of([(run, scenario)], policy, policy_id)
        if not found:
            known = self._reads.query("scenario_names", run_id=run)["scenario_name"]
            raise NotFound(f"no scenario '{scenario}' in run '{run}' (under policy '{policy}')"
                           f"{did_you_mean(scenario, known)}")
        return found[(run, scenario)]

    def _ruled(self, policy: str, keys: list[str]) -> dict[tuple[str, str], list[StandingReview]] | None:
        """Under a policy whose review rule is not the latest review's (majority, adjudicated), the
        reviews as it counted them, an undecided one said so; None under any other policy (then the
        ``reviews`` view's latest standing reviews are what it counted)."""
        from scorelake.pipeline import find_policy, ruled_reviews

        if policy == RECORDED:
            return None
        spec = find_policy(self._reads.store, policy)
        if not spec.reviews or spec.review_rule in (None, "latest"):
            return None
        frame = ruled_reviews(self._reads.store, spec.review_rule, spec.adjudicator, keys)
        return {key: records(StandingReview, part) for key, part in
                frame.partition_by("run_id", "scenario_name", as_dict=True, maintain_order=True).items()}

    def evidence_of(self, keys: Sequence[tuple[str, str]], policy: str, policy_id: str) -> dict[tuple[str, str], Evidence]:
        """``evidence`` of each (run, scenario) of ``keys`` the warehouse holds, under a policy known to
        exist: each part of it asked for once for all of them (a report asks for a thousand)."""
        query = self._reads.query
        wanted = list(dict.fromkeys(keys))
        asked = {"run_ids": sorted({run for run, _ in wanted}), "scenarios": sorted({name for _, name in wanted}),
                 "keys": [f"{run}\x1f{name}" for run, name in wanted]}
        with self._reads.connection():
            rows = {(row["run_id"], row["scenario_name"]): row
                    for row in query("scenario", **asked, policy_id=policy_id).iter_rows(named=True)}
            if not rows:
                return {}
            judge = next(iter(rows.values()))["judge"]  # the policy's: one for every scenario

            def parts(name: str, kind: type, **params) -> dict[tuple[str, str], list]:
                frame = query(name, **asked, **params)
                return {key: records(kind, part) for key, part in
                        frame.partition_by("run_id", "scenario_name", as_dict=True, maintain_order=True).items()}

            judged = parts("scenario_judge", Judgement, judge=judge)
            verdicts = parts("scenario_verdicts", ItemVerdict, judge=judge)
            turns, calls = parts("scenario_turns", Turn), parts("scenario_tool_calls", ToolCall)
            reviews = self._ruled(policy, asked["keys"]) or parts("scenario_reviews", StandingReview)
            inputs, tasks = parts("scenario_judge_input", JudgeInput), parts("scenario_task", Task)
            heard = parts("scenario_heard", HeardTurns)
        first = lambda found, key: (found.get(key) or [None])[0]  # noqa: E731
        return {key: Evidence(key[0], policy, ScenarioRow.of(rows[key]), verdicts.get(key, []), first(judged, key),
                              turns.get(key, []), calls.get(key, []), reviews.get(key, []), first(inputs, key),
                              first(tasks, key), first(heard, key))
                for key in wanted if key in rows}
