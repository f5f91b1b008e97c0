"""Inspect AI evaluation logs (``.eval`` archives and ``.json`` logs) as runs."""

from scorelake.transforms.sources.inspect._source import InspectLog

__all__ = ["InspectLog"]
