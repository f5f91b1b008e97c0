"""The errors a user can act on. Each carries the exit code the command line ends with; the
message says what is wrong and, where there is one, what to do."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable


class ScorelakeError(Exception):
    """Bad usage or input: an unknown run, policy or version, a malformed argument."""

    exit_code = 2


class NotFound(ScorelakeError, LookupError):
    """No such run, policy, run group or warehouse version."""


class InvalidArgument(ScorelakeError, ValueError):
    """An argument that cannot be used as given."""

    @classmethod
    def of_validation(cls, exc, options: dict[str, str] | None = None) -> InvalidArgument:
        """A pydantic ``ValidationError`` as the command line says it: the option (a field's name, or
        ``options[name]``), what it takes and what it got."""
        first = exc.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        if not first["loc"]:  # a rule between fields: its message names the options it is about
            return cls(message)
        field = str(first["loc"][0])
        where = (options or {}).get(field) or field.replace("_", "-")
        got = f" (got {first['input']!r})" if not isinstance(first["input"], dict) else ""
        return cls(f"--{where}: {message[0].lower()}{message[1:]}{got}")


MAX_PRICE = 1e9  # per million tokens: a price past it is a typo, and the costs it makes overflow to inf


def check_range(option: str, value: float | None, low: float | None = None, high: float | None = None) -> None:
    """Refuse a number that would switch a check off or break one: NaN, an infinity, or one outside
    [``low``, ``high``] (None: no bound). ``option`` is its name on the command line, without ``--``."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(f"--{option}: a finite number (got {value})")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = (f"between {low:g} and {high:g}" if low is not None and high is not None
                  else f"{low:g} or more" if low is not None else f"{high:g} or less")
        raise InvalidArgument(f"--{option}: {bounds} (got {value:g})")


class WarehouseMissing(ScorelakeError, FileNotFoundError):
    """No warehouse at the location (or one that must be converted first): nothing to work on."""

    exit_code = 1


class TableMissing(WarehouseMissing):
    """A table of a warehouse that has others: its first write was cut short while creating them."""

    def __init__(self, table: str, message: str):
        super().__init__(message)
        self.table = table


class WarehouseBusy(ScorelakeError, RuntimeError):
    """Another process is writing the warehouse."""

    exit_code = 1


class ClusterFailed(ScorelakeError, RuntimeError):
    """The Dask cluster a run was on failed it mid-way (its scheduler gone, its connection lost)."""

    exit_code = 1


class NothingFound(ScorelakeError):
    """No run where the user pointed: nothing to work on."""

    exit_code = 1


class QueryLimitHit(ScorelakeError):
    """A query ran past its time or memory limit."""


class JudgeRefused(ScorelakeError):
    """The judge endpoint refused the key, or does not exist (401, 403, 404): nothing more is asked."""

    exit_code = 1


class JudgeUnavailable(JudgeRefused):
    """The judge left many calls in a row unanswered after their retries: it is down, asking stops."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``; did you mean 'x'?`` naming the known names closest to ``name`` (a typo, a separator
    dropped: ``tau2_retail_43`` for ``tau2_retail__43``), or nothing when none is close."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
