"""The NeMo Labs Voice Agent runner's ``eval_*`` session folders (run-format.md)."""

from scorelake.transforms.sources.nemo._listing import list_session, recording
from scorelake.transforms.sources.nemo._raw import RunArgsFile
from scorelake.transforms.sources.nemo._read import read_session
from scorelake.transforms.sources.nemo._source import NemoSessions

__all__ = ["NemoSessions", "RunArgsFile", "list_session", "read_session", "recording"]
