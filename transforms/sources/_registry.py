"""The input formats scorelake reads, in the order discovery asks them whether a path is theirs: the
built-in ones, then those other packages register under the entry point group ``scorelake.sources``
(docs/guide/sources.md), by name. A registered source is a ``Source`` (a class made with no
arguments, or an instance); one that cannot be loaded, is no ``Source`` or takes a kind already taken
is left out and said (``plugin_problems``), never the end of an ingest."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from scorelake.transforms.sources._session import Source
from scorelake.transforms.sources.inspect import InspectLog
from scorelake.transforms.sources.nemo import NemoSessions
from scorelake.transforms.sources.tau import Tau2File, Tau2Folder, TauBenchFile

GROUP = "scorelake.sources"
# an Inspect .json log is asked before a tau2 results file: its first bytes are its own, tau2's test is looser
BUILT_IN: tuple[Source, ...] = (NemoSessions(), Tau2Folder(), InspectLog(), Tau2File(), TauBenchFile())
_METHODS = ("recognises", "fingerprint", "input_files", "read", "warnings")


def _plugins() -> tuple[list[Source], list[str]]:
    """The sources other packages register, and what kept any of them out, in words."""
    from importlib.metadata import entry_points

    found, problems = [], []
    taken = {source.kind for source in BUILT_IN}
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.name, p.value)):
        where = f"source plugin '{point.name}' ({point.value})"
        try:
            loaded = point.load()
            source = loaded() if isinstance(loaded, type) else loaded
        except Exception as exc:  # noqa: BLE001  (anything a third party's import may raise)
            problems.append(f"{where} not loaded: {type(exc).__name__}: {exc}")
            continue
        missing = [m for m in _METHODS if not callable(getattr(source, m, None))]
        kind = getattr(source, "kind", None)
        if missing or not isinstance(kind, str) or not kind:
            problems.append(f"{where} is no source: " + (f"no {', '.join(missing)}" if missing else "no kind"))
        elif kind in taken:
            problems.append(f"{where} not loaded: the kind '{kind}' is taken")
        else:
            taken.add(kind)
            found.append(source)
    return found, problems


class _Sources(Mapping[str, Source]):
    """The sources by kind, the built-in ones first; other packages' loaded the first time asked."""

    def __init__(self) -> None:
        self._all: dict[str, Source] | None = None
        self.problems: list[str] = []

    def _loaded(self) -> dict[str, Source]:
        if self._all is None:
            plugins, self.problems = _plugins()
            self._all = {source.kind: source for source in (*BUILT_IN, *plugins)}
        return self._all

    def __getitem__(self, kind: str) -> Source:
        return self._loaded()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


SOURCES = _Sources()


def plugin_problems() -> list[str]:
    """Why a source another package registers was left out, one line each (none: all loaded)."""
    SOURCES._loaded()
    return list(SOURCES.problems)
