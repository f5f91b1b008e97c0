"""The examples of the README and the manual (``docs/``), as the tests and ``tests/user_install.py``
run them: the README's blocks, then each page's in the order the manual's navigation lists them;
the tutorial's apart (it starts from an empty folder of its own). Standard library only."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TUTORIAL = REPO / "docs" / "tutorial.md"


def pages() -> list[Path]:
    """The README, then every page of mkdocs.yml's navigation in its order, the tutorial left out."""
    listed = re.findall(r":\s*([\w/.-]+\.md)\s*$", (REPO / "mkdocs.yml").read_text(), re.M)
    return [REPO / "README.md", *(REPO / "docs" / page for page in listed if REPO / "docs" / page != TUTORIAL)]


def blocks(language: str, of: list[Path] | None = None) -> list[str]:
    """The fenced blocks of ``language`` (```` ```bash ````, ```` ```python engines ````) in ``of``
    (default: ``pages()``), in order."""
    return [block for page in (pages() if of is None else of)
            for block in re.findall(rf"```{language}\n(.*?)```", page.read_text(), re.S)]
