"""The sample runs inside the package: a first look with nothing of one's own."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_runs() -> Path:
    """The folder of the sample runs scorelake ships (two voice-agent sessions, 46 scenarios): what
    ``scorelake demo`` ingests, and what the README's and the manual's examples read from an empty folder."""
    return Path(str(files("scorelake.sample") / "runs"))
