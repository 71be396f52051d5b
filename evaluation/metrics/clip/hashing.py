"""Content hashes that key cached image embeddings and identify checkpoints."""

from __future__ import annotations

import hashlib
import os
import re

__all__ = ["content_hash", "is_content_hash"]

_CHUNK = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")


def content_hash(data: bytes | str | os.PathLike[str]) -> str:
    """Return the lowercase hex sha256 of ``data`` (bytes) or of the file at a path (str or PathLike).

    The file is read in chunks, so multi-gigabyte checkpoints do not need to fit in memory.
    """
    if isinstance(data, bytes | bytearray | memoryview):
        return hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256()
    with open(data, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_content_hash(value: object) -> bool:
    """True for a lowercase 64-character hex string, the form :func:`content_hash` returns."""
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None
