"""Leaderboard statistics (pure): the public/private split, the shared image resamples, and the 95%
intervals and paired tests read from each score's bootstrap replicates.

Every interval and paired test is of the statistic shown. A resample of a split is a row of draw counts
over the split's images (sorted ids); the scorer recomputes each metric's corpus score on it
(:mod:`evaluation.metrics.text.resampling`), and those replicates are stored with the score. The
resamples of a split depend only on the phase's seed and the split's images, so every entry, language,
reference count and metric of the phase is resampled on the same image draws: a paired test compares
two entries' replicates row by row, and the mean over languages is the mean of the languages' replicates
of each resample. The paired test is a centred one (:func:`paired_p_value`). The generators are the project's seeded ones (``evaluation.research.bootstrap``): a
submission scored twice gets the same intervals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from evaluation.research.bootstrap import percentile_interval, seeded_rng

SCORE_N_BOOT = 1000


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


def split_resamples(image_ids: Sequence[int], *, seed: int, n_boot: int = SCORE_N_BOOT) -> np.ndarray | None:
    """The phase's resamples of a split's images (ids in ascending order): ``(n_boot, len(image_ids))``
    draw counts, each row drawing as many images, with replacement, as the split has. None for fewer
    than two images (no interval). The draws depend on ``seed`` and the ids only."""
    ids = np.asarray(image_ids, dtype=np.int64)
    n = len(ids)
    if n < 2:
        return None
    if np.any(np.diff(ids) <= 0):
        raise ValueError("the split's image ids must be distinct and in ascending order")
    # The ids themselves name the draw, so a split of other images never shares its resamples.
    group = "images|" + hashlib.sha256(ids.astype("<i8").tobytes()).hexdigest()[:32]
    picks = seeded_rng(seed, group).integers(0, n, size=(n_boot, n))
    picks += np.arange(n_boot)[:, None] * n
    return np.bincount(picks.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(np.int32)


def interval(replicates: np.ndarray | None, value: float | None = None) -> tuple[float, float] | None:
    """95% percentile interval of a score's replicates. With the score's ``value``: an end that misses it
    by float rounding only (1e-12 of its size; the replicates sum in another order) is moved onto it, so
    a resample equal to the corpus itself (two images drawn once each) cannot put the interval just
    beside its number."""
    if replicates is None or len(replicates) == 0:
        return None
    found = percentile_interval(np.asarray(replicates, dtype=np.float64))
    if found is None or value is None:
        return found
    low, high = found
    slack = 1e-12 * max(1.0, abs(value))
    if value < low <= value + slack:
        low = value
    if value - slack <= high < value:
        high = value
    return low, high


def paired_p_value(better: np.ndarray | None, worse: np.ndarray | None, difference: float) -> float | None:
    """Paired bootstrap test of an observed ``difference`` (``better``'s score minus ``worse``'s, >= 0 for
    adjacent rows of a ranking) on the replicates of both scores over the same resamples.

    The resampled differences, centred on their mean, stand for what chance alone gives; the p-value is
    the share of them at least as far from zero as the observed difference, with one added to both counts
    (``(1 + #{|d* - mean d*| >= |difference|}) / (1 + resamples)``), as sacrebleu's paired bootstrap after
    MultEval does. The test says whether the ranking's order is significant; it cannot favour the entry
    ranked below, whose resampled scores may still exceed the one above in many resamples when the
    statistic's bootstrap distribution is skewed (BLEU's brevity penalty, CIDEr's document frequencies).
    Small (< 0.05): the order is significant."""
    if better is None or worse is None or len(better) != len(worse) or not len(better):
        return None
    deltas = np.asarray(better, dtype=np.float64) - np.asarray(worse, dtype=np.float64)
    extreme = np.abs(deltas - deltas.mean()) >= abs(difference)
    return float((1 + extreme.sum()) / (1 + len(deltas)))


def replicates_to_bytes(replicates: np.ndarray | None) -> bytes | None:
    return None if replicates is None else np.asarray(replicates, dtype="<f8").tobytes()


def replicates_from_bytes(data) -> np.ndarray | None:
    return None if data is None else np.frombuffer(bytes(data), dtype="<f8")
