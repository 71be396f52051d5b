"""Which items go into a new batch: a pure function over plain data (no Django).

The engine hands it the candidate items it managed to lock, each with its count of
live-or-done assignments; the choice takes the ones furthest from the replication target
first, so a campaign fills evenly (every image gets its first caption before any gets a
second), and breaks ties by a per-item random key fixed when the item was created.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    item_id: int
    active_count: int
    shuffle_key: int = 0


def choose_items(
    candidates: Iterable[Candidate],
    *,
    batch_size: int,
    replication: int,
    exclude: frozenset[int] | set[int] = frozenset(),
) -> list[int]:
    """Return up to ``batch_size`` item ids, neediest first.

    Items already at or above ``replication`` and items in ``exclude`` (already assigned to
    this annotator) are never chosen. Duplicated candidates count once.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    if replication < 1:
        raise ValueError("replication must be at least 1")
    seen: set[int] = set()
    eligible: list[Candidate] = []
    for c in candidates:
        if c.item_id in seen or c.item_id in exclude or c.active_count >= replication:
            continue
        seen.add(c.item_id)
        eligible.append(c)
    eligible.sort(key=lambda c: (c.active_count, c.shuffle_key, c.item_id))
    return [c.item_id for c in eligible[:batch_size]]
