"""Keys and ids the floors above share: a text's key wherever one is stored, an ingest's generation."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime


def text_hash(text: str) -> str:
    """A text's key: the first 32 hex digits of its SHA-256 (lone surrogates kept, as json keeps them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def new_generation() -> str:
    """An ingest's generation: sortable by time (the ingest that wrote it), unique by its random tail."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f") + secrets.token_hex(3)
