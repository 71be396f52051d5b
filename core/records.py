"""The plain part of a record's ``as_dict``: attributes under their own names (pure)."""

from __future__ import annotations

from typing import Any


def attributes(record: object, *names: str) -> dict[str, Any]:
    """``{name: record.name}`` for each of ``names``, in that order (properties included)."""
    return {name: getattr(record, name) for name in names}
