"""What every service reads through: the store, the version read, one connection to the views."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from scorelake.storage import Store
from scorelake.transforms.errors import InvalidArgument, NotFound, did_you_mean
from scorelake.transforms.names import RECORDED

if TYPE_CHECKING:
    import duckdb
    import polars as pl


class Reads:
    """A warehouse's store read as it stands, or as it stood at ``as_of``; nested reads share one
    connection (a command that asks several questions opens the views once)."""

    def __init__(self, store: Store, as_of: str | None):
        self.store, self.as_of = store, as_of
        self._con: duckdb.DuckDBPyConnection | None = None

    @property
    def location(self) -> str:
        return self.store.location

    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._con is not None:
            yield self._con
            return
        self.store.tables.require()
        with self.store.views.connect(self.as_of) as con:
            self._con = con
            try:
                yield con
            finally:
                self._con = None

    def query(self, name: str, parts: dict[str, str] | None = None, **params: object) -> pl.DataFrame:
        """``sql/queries/<name>.sql`` with its ``$parameters`` (and ``{{ parts }}``)."""
        with self.connection() as con:
            return self.store.views.query(con, name, parts, **params)

    def policy(self, policy: str) -> dict:
        """The stored policy named (or with the id) ``policy``: its ``policies`` row."""
        found = self.query("policy", policy=policy)
        if found.is_empty():
            raise NotFound(f"no stored policy named '{policy}'{did_you_mean(policy, self.query('policies')['name'])}")
        return found.row(0, named=True)

    def policy_id(self, policy: str = RECORDED) -> str:
        return self.policy(policy)["policy_id"]

    def run(self, run: str) -> dict:
        """The committed ``runs`` row of ``run``, or ``NotFound``."""
        found = self.query("run", run_id=run)
        if found.is_empty():
            raise NotFound(f"no run '{run}' in {self.location}{did_you_mean(run, self.query('run_ids')['run_id'])}")
        return found.row(0, named=True)

    def runs_known(self, runs: Sequence[str] | None) -> list[str] | None:
        """``runs`` as a list (None: every run), once each is known to exist."""
        for run in runs or ():
            self.run(run)
        return list(runs) if runs else None

    def scoped(self, policy: str, *runs: str | None) -> str:
        """The id of the stored policy ``policy``, once every run given (None: all runs) is known to exist."""
        policy_id = self.policy_id(policy)
        self.runs_known([run for run in runs if run is not None])
        return policy_id

    def writable(self) -> None:
        """Writes need the current version."""
        if self.as_of is not None:
            raise InvalidArgument(f"this warehouse is opened as of {self.as_of}: writes need the current version")
