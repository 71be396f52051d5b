"""Which metric to trust: meta-evaluation the way the WMT metrics task does it (pure functions).

(Being written: the item type is settled first, so that the builders can fill it.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Item"]


@dataclass(frozen=True)
class Item:
    """One image of one compared pair (m2 against m1 in one language), the unit of the item level.

    ``human`` is the mean of the image's judgments, each a score from m2's side (−3 … +3, positive:
    people prefer m2's caption); ``n_judgments`` how many. ``deltas`` maps each metric's name to
    metric(m2's caption) − metric(m1's caption) on this image.
    """

    language: str
    m1: str
    m2: str
    image: str
    human: float
    n_judgments: int
    deltas: Mapping[str, float] = field(default_factory=dict)

    @property
    def pair(self) -> tuple[str, str, str]:
        """The comparison the item belongs to: ``(m1, m2, language)``, as ``Comparison.key``."""
        return (self.m1, self.m2, self.language)
