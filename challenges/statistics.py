"""Leaderboard statistics over per-image scores (pure): the public/private split, 95% bootstrap
intervals of a mean over images, and the paired bootstrap between two entries on the same images.

The generators are the project's seeded ones (``evaluation.research.bootstrap``): the same seed and
group give the same draws, so a submission scored twice gets the same intervals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluation.research.bootstrap import percentile_interval, seeded_rng

SCORE_N_BOOT = 1000
# Resamples drawn at once: bounds memory (rows x images) for 3,600-image sets.
_ROWS = 250


def public_images(image_ids: Sequence[int], *, seed: int, share: float) -> set[int]:
    """The public part of a test phase's images: a seeded permutation of the sorted ids, its first
    ``round(share * n)`` (at least one, and one short of all when there are two or more)."""
    ids = sorted(image_ids)
    if not ids:
        return set()
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    order = rng.permutation(len(ids))
    count = min(max(1, round(share * len(ids))), max(1, len(ids) - 1))
    return {ids[i] for i in order[:count]}


def _resampled_means(values: np.ndarray, *, n_boot: int, seed: int, group: str) -> np.ndarray:
    rng = seeded_rng(seed, group)
    out = np.empty(n_boot)
    for start in range(0, n_boot, _ROWS):
        rows = min(_ROWS, n_boot - start)
        picks = rng.integers(0, len(values), size=(rows, len(values)))
        out[start : start + rows] = values[picks].mean(axis=1)
    return out


def mean_interval(
    values: Sequence[float], *, n_boot: int = SCORE_N_BOOT, seed: int = 0, group: str = ""
) -> tuple[float, float] | None:
    """95% percentile interval of the mean of ``values`` over images resampled with replacement."""
    array = np.asarray(values, dtype=float)
    if len(array) < 2:
        return None
    return percentile_interval(_resampled_means(array, n_boot=n_boot, seed=seed, group=group))


def paired_p_value(
    better: Sequence[float],
    worse: Sequence[float],
    *,
    n_boot: int = SCORE_N_BOOT,
    seed: int = 0,
    group: str = "",
) -> float | None:
    """Paired bootstrap over the same images (Koehn 2004): the share of resamples in which ``better``'s
    mean is not above ``worse``'s. Small (< 0.05): the order is significant."""
    a, b = np.asarray(better, dtype=float), np.asarray(worse, dtype=float)
    if len(a) != len(b) or len(a) < 2:
        return None
    means = _resampled_means(a - b, n_boot=n_boot, seed=seed, group=group)
    return float((means <= 0).mean())
