"""The judges a warehouse holds: the built-in ``recorded`` (the runs' own judge_result.json) and
the judges ``rejudge`` made, each a name bound to the settings its judgements are made with."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from scorelake.storage import Store, sql_literal
from scorelake.transforms.columns import frame
from scorelake.transforms.errors import InvalidArgument, NotFound
from scorelake.transforms.judging import (
    BUILTIN,
    JudgeSpec,
    run_judge,
)
from scorelake.pipeline._policies import stored_policies
from scorelake.transforms.scoring import RECORDED

COMMIT_LOCK_WAIT_S = 600.0  # a commit waits this long for another writer (an ingest) to finish


def stored_judges(store: Store) -> list[JudgeSpec]:
    """Every judge, the built-in ``recorded`` first."""
    rows = store.tables.read("judges").sort("created_at").unique("name", keep="first", maintain_order=True).collect()
    return [BUILTIN] + [JudgeSpec.model_validate_json(s) for s in rows["spec_json"]]


def find_judge(store: Store, name: str) -> JudgeSpec:
    for judge in stored_judges(store):
        if judge.name == name:
            return judge
    known = ", ".join(j.name for j in stored_judges(store))
    raise NotFound(f"no judge named '{name}' (judges: {known}); `scorelake rejudge --judge {name} ...` makes one")


def define_judge(store: Store, name: str, default_base: str | None = None, **settings: object) -> JudgeSpec:
    """The judge ``name`` of the given settings (unset ones: as stored; a stored judge keeps its
    settings, its judgements were made with them). A new judge's base is ``default_base`` unless set."""
    if name == RECORDED:
        raise InvalidArgument(f"'{RECORDED}' is the built-in judge (the runs' own judge_result.json): "
                              "give the new judge another name")
    existing = next((j for j in stored_judges(store) if j.name == name), None)
    given = {k: v for k, v in settings.items() if v is not None}
    if existing is None:
        spec = JudgeSpec.checked(name=name, **{"base": default_base, **given})
    else:
        spec = JudgeSpec.checked(**{**existing.model_dump(), **given})
        if spec.identity() != existing.identity():
            raise InvalidArgument(f"judge '{name}' exists with other settings ({existing.describe()}); its "
                                  "judgements were made with those: give the new settings another judge name")
    if spec.base == name:
        raise InvalidArgument(f"judge '{name}' cannot be its own base (--from)")
    if spec.base is not None:
        find_judge(store, spec.base)
    return spec


def save_judge(store: Store, spec: JudgeSpec) -> bool:
    """Store a judge's definition; False when it is stored already (or is the built-in one)."""
    if spec.name == RECORDED or store.tables.read("judges").filter(pl.col("name") == spec.name).select(
            pl.len()).collect().item():
        return False
    store.tables.append("judges", frame("judges", [{"name": spec.name, "spec_json": spec.model_dump_json(),
                                                    "created_at": datetime.now(UTC)}]))
    return True


def forget_judge(store: Store, name: str) -> None:
    """A judge that never answered a call: its (error) judgements deleted and no definition kept, so
    its name stays free for the right settings."""
    with store.lock.hold(COMMIT_LOCK_WAIT_S):
        store.tables.delete("judgements", f"judge = {sql_literal(name)}")
        store.tables.delete("judges", f"name = {sql_literal(name)}")
        store.log.record("rejudge", f"judge {name} never answered: its judgements removed")
        store.views.build()


def policies_using(store: Store, judge: str) -> list[str]:
    return [p.name for p in stored_policies(store) if p.judge == judge]


class RunJudgeSettings:
    """The runs' own judge settings per invocation (run_args.json), each parsed once."""

    def __init__(self, runs: pl.DataFrame):
        self.run_args = dict(runs.select("run_id", "run_args_json").iter_rows())
        self.parsed: dict[tuple[str, int], object] = {}

    def of(self, run_id: str, invocation: int):
        if (run_id, invocation) not in self.parsed:
            self.parsed[run_id, invocation] = run_judge(self.run_args[run_id], invocation)
        return self.parsed[run_id, invocation]
