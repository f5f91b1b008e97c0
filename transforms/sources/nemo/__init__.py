"""The NeMo Labs Voice Agent runner's ``eval_*`` session folders (run-format.md)."""

from scorelake.transforms.sources.nemo._raw import RunArgsFile
from scorelake.transforms.sources.nemo._read import read_session

__all__ = ["RunArgsFile", "read_session"]
