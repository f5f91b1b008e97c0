"""Scoring: policies defined, stored and listed; stored runs re-scored under one by the re-score flow."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import polars as pl

from scorelake._services._reads import Reads
from scorelake.flows.runtime import say_nothing
from scorelake.transforms.errors import InvalidArgument

if TYPE_CHECKING:
    from scorelake.transforms.results import RescoreResult
    from scorelake.transforms.scoring import Policy


def _flags(judge_threshold, min_agent_turns, strict_match, judge_enabled, judge, whitelists, reviews,
           review_rule=None, adjudicator=None, selective=False) -> dict:
    """The policy fields given (a flag left None, no whitelist, no reviews: not given)."""
    given = {"judge_threshold": judge_threshold, "min_agent_turns": min_agent_turns, "strict_match": strict_match,
             "judge_enabled": judge_enabled, "judge": judge, "whitelists": dict(whitelists or {}),
             "reviews": reviews or None, "review_rule": review_rule, "adjudicator": adjudicator,
             "selective": selective or None}
    return {k: v for k, v in given.items() if v not in (None, {})}


class Scoring:
    def __init__(self, reads: Reads):
        self._reads = reads

    def define_policy(self, name: str | None = None, *, judge_threshold: float | None = None,
                      min_agent_turns: int | None = None, strict_match: bool | None = None,
                      judge_enabled: bool | None = None, judge: str | None = None,
                      whitelists: Mapping[str, Sequence[str]] | None = None, reviews: bool = False,
                      review_rule: str | None = None, adjudicator: str | None = None) -> Policy:
        """The policy to score under: the stored one named ``name`` when no flag is given, else a
        policy of those flags (named ``name``, or after its id), checked against the stored ones.
        ``judge``: the judge (see ``rejudge``) whose judgements JUDGE_PASSED and NL_ASSERTION take.
        Nothing is stored yet."""
        from scorelake.pipeline import check_policy, check_whitelisted_domains, find_judge, find_policy
        from scorelake.transforms.scoring import Policy

        defined = _flags(judge_threshold, min_agent_turns, strict_match, judge_enabled, judge, whitelists, reviews,
                         review_rule, adjudicator)
        if not defined:
            if not name:
                raise InvalidArgument("give a policy name and/or the flags that define a policy")
            return find_policy(self._reads.store, name)
        policy = Policy.checked(name, **defined)
        if policy.judge:
            find_judge(self._reads.store, policy.judge)
        check_policy(self._reads.store, policy)
        check_whitelisted_domains(self._reads.store, policy)
        return policy

    def rescore(self, policy: str | None = None, *, judge_threshold: float | None = None,
                min_agent_turns: int | None = None, strict_match: bool | None = None,
                judge_enabled: bool | None = None, judge: str | None = None,
                whitelists: Mapping[str, Sequence[str]] | None = None, reviews: bool = False,
                review_rule: str | None = None, adjudicator: str | None = None, selective: bool = False,
                runs: Sequence[str] | None = None, dask_address: str | None = None, prefect: bool | None = None,
                verbose: bool = False, say: Callable[[str], None] = say_nothing) -> RescoreResult:
        """Define (or reuse) a policy and score stored runs (``runs``, default all) under it from the
        tables alone: a ``RescoreResult`` (the policy's name and id, the scenarios scored). Under a
        ``judge``, every stored judge input in scope must have been judged by it (``rejudge``). With
        ``reviews``, people's standing verdicts (``review``) take the place of what they review; a
        policy that takes reviews re-scores the runs reviewed since, each time it is run again;
        ``review_rule`` says which verdict stands where reviewers reviewed the same key: ``latest``
        (the default), ``majority`` (none on a tie) or ``adjudicated`` (the reviewers' where they
        agree, the ``adjudicator``'s where they disagree). ``selective``: JUDGE_PASSED only where the
        judge's calibration (``calibrate_judge``) keeps its verdict; an escalated one is not applicable
        unless people reviewed it (with ``reviews``, their verdict counts). The flow checks the policy
        against the stored ones (once, under the writer lock)."""
        from scorelake.flows import runtime
        from scorelake.transforms.scoring import Policy

        self._reads.writable()
        defined = _flags(judge_threshold, min_agent_turns, strict_match, judge_enabled, judge, whitelists, reviews,
                         review_rule, adjudicator, selective)
        if not defined and not policy:
            raise InvalidArgument("give a policy name and/or the flags that define a policy")
        spec = Policy.checked(policy, **defined).spec_json() if defined else None
        return runtime.rescore(runtime.how_on(dask_address, prefect, verbose, say), warehouse=self._reads.location,
                               policy_spec=spec,
                               policy_name=None if defined else policy, run_ids=list(runs) if runs else None)

    def policies(self) -> pl.DataFrame:
        """Stored policies, ``recorded`` first: id, name and every field (None: each run's own flag;
        ``whitelists`` as JSON, domain to signals)."""
        stored = self._reads.query("policies")
        specs = [json.loads(spec) for spec in stored["spec_json"]]
        return pl.DataFrame([{"policy_id": pid, **spec, "judge": judge, "reviews": reviews,
                              "whitelists": json.dumps(spec["whitelists"], sort_keys=True)}
                             for pid, judge, reviews, spec in zip(stored["policy_id"], stored["judge"],
                                                                  stored["reviews"], specs)])
