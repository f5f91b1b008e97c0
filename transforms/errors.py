"""The errors a user can act on. Each carries the exit code the command line ends with; the
message says what is wrong and, where there is one, what to do."""

from __future__ import annotations


class ScorelakeError(Exception):
    """Bad usage or input: an unknown run, policy or version, a malformed argument."""

    exit_code = 2


class NotFound(ScorelakeError, LookupError):
    """No such run, policy, run group or warehouse version."""


class InvalidArgument(ScorelakeError, ValueError):
    """An argument that cannot be used as given."""


class WarehouseMissing(ScorelakeError, FileNotFoundError):
    """No warehouse at the location (or one that must be converted first): nothing to work on."""

    exit_code = 1


class WarehouseBusy(ScorelakeError, RuntimeError):
    """Another process is writing the warehouse."""

    exit_code = 1


class NothingFound(ScorelakeError):
    """No run where the user pointed: nothing to work on."""

    exit_code = 1


class QueryLimitHit(ScorelakeError):
    """A query ran past its time or memory limit."""


class JudgeRefused(ScorelakeError):
    """The judge endpoint refused the key, or does not exist (401, 403, 404): nothing more is asked."""

    exit_code = 1
