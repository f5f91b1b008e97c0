"""Short content hashes shared by the floors above: a text's key wherever one is stored."""

from __future__ import annotations

import hashlib


def text_hash(text: str) -> str:
    """A text's key: the first 32 hex digits of its SHA-256 (lone surrogates kept, as json keeps them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
