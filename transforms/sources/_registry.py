"""The input formats scorelake reads, in the order discovery asks them whether a path is theirs."""

from __future__ import annotations

from scorelake.transforms.sources._session import Source
from scorelake.transforms.sources.nemo import NemoSessions
from scorelake.transforms.sources.tau import Tau2File, Tau2Folder, TauBenchFile

SOURCES: dict[str, Source] = {source.kind: source for source in (NemoSessions(), Tau2Folder(), Tau2File(), TauBenchFile())}
