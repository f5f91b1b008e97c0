"""A scenario's definition, hashed part by part: what decides its verdict besides the agent, so a
comparison can tell a changed scenario from a changed agent."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from scorelake.transforms.sources._files import dump_json_sorted

_dump_part = json.JSONEncoder(sort_keys=True, default=str).encode  # json.dumps(value, sort_keys=True, default=str)


def part_hash(value: Any) -> str:
    """A short hash of one part of a definition (JSON, keys sorted)."""
    return hashlib.blake2b(_dump_part(value).encode(), digest_size=8).hexdigest()


def definition_hash(parts: dict[str, str]) -> str:
    """One hash of a scenario's definition from its parts' hashes."""
    return hashlib.blake2b(dump_json_sorted(parts).encode(), digest_size=12).hexdigest()


def definition_columns(parts: dict[str, str]) -> dict[str, str]:
    """The ``definition_hash`` and ``definition_json`` columns of a scenario whose parts are ``parts``."""
    return {"definition_hash": definition_hash(parts), "definition_json": dump_json_sorted(parts)}
