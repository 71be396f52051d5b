"""Is one metric's item-level acc23 better than another's: the two permutation tests of
mt-metrics-eval, each under its own name (pure).

Both tests see the items the way mt-metrics-eval's item level does with two systems per item: the
gold and metric vectors packed as m1's scores (all 0) then m2's, so that an item is the pair
(0, Δ) and its human score the pair (0, human). ``better`` plays the reference's ``corr2`` and
``worse`` its ``corr1``: the p-value is that of "``better`` correlates better".

``PermutationSigDiff`` (the default, :data:`PERMUTATION_SIG_DIFF`)
    ``PermutationSigDiff(corr1, corr2, KendallWithTiesOpt, average_by="item", sample_rate=1.0)``:
    each metric's packed vector is z-scored (``scipy.stats.zscore``, the zeros of m1 included);
    in each draw every *score* (each system's score on each item, 2 × items of them) is taken
    from one metric or the other with probability 1/2, so a hybrid item may pair m1's score of one
    metric with m2's score of the other; both hybrids are re-calibrated (acc23 with its own ε) and
    the draw counts when the second hybrid's accuracy minus the first's is at least the observed
    difference.

``PairwisePermutationSigDiff`` (:data:`PAIRWISE_PERMUTATION_SIG_DIFF`)
    The reference's cheaper variant: each metric's ε is calibrated once on its raw scores, and a
    draw swaps the two metrics' *decisions* on an item (the pair's comparison), without
    re-calibration.

Accuracies are compared as the reference compares them, as floats ``count / items``: a draw whose
difference equals the observed one up to the last bit of that division is counted as the reference
counts it, so p-values from the same swaps are equal to the last digit. Draws come from a
``numpy.random.Generator``, or from a legacy ``numpy.random.RandomState``: seeded like
``np.random.seed(s)``, the latter draws exactly the reference's swaps (``np.random.binomial``) and
gives its p-values, which is how the tests pin both tests against the reference's output.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from evaluation.research.meta_evaluation.acc23 import _BLOCK

PERMUTATION_SIG_DIFF = "PermutationSigDiff"
PAIRWISE_PERMUTATION_SIG_DIFF = "PairwisePermutationSigDiff"
SIGNIFICANCE_TESTS = (PERMUTATION_SIG_DIFF, PAIRWISE_PERMUTATION_SIG_DIFF)
DEFAULT_SIGNIFICANCE_TEST = PERMUTATION_SIG_DIFF

Rng = np.random.Generator | np.random.RandomState


def best_agreements_rows(human: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The calibrated number of agreeing items for each row of metric differences (rows × items):
    the largest acc23 count over every threshold ε (0 and each distinct |Δ|), ties when |Δ| ≤ ε."""
    order = np.argsort(np.abs(rows), axis=1)
    d = np.take_along_axis(np.abs(rows), order, axis=1)
    signs = np.take_along_axis(np.sign(rows), order, axis=1)
    hs = np.sign(human)[order]
    human_tie = hs == 0
    same_sign = (hs == signs) & ~human_tie
    values = np.cumsum(human_tie, axis=1) + (
        same_sign.sum(axis=1, keepdims=True) - np.cumsum(same_sign, axis=1)
    )
    # Only the last item of a run of equal |Δ| is a threshold; ε = 0 with nothing tied is one too.
    is_end = np.ones_like(d, dtype=bool)
    is_end[:, :-1] = d[:, 1:] != d[:, :-1]
    values = np.where(is_end, values, -1)
    return np.maximum(values.max(axis=1), same_sign.sum(axis=1))


def calibrated_agreement(human: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Per item, whether the metric's decision at its calibrated ε (the smallest ε among those that
    maximise acc23, as ``tau_optimization``) agrees with people."""
    magnitude = np.abs(deltas)
    candidates = np.unique(np.concatenate([[0.0], magnitude]))
    human_tie = human == 0
    best, best_agree = -1, None
    for epsilon in candidates:  # ascending: the first maximum is the smallest ε
        tie = magnitude <= epsilon
        agree = np.where(tie, human_tie, (np.sign(deltas) == np.sign(human)) & ~human_tie)
        count = int(agree.sum())
        if count > best:
            best, best_agree = count, agree
    return best_agree


def _swaps(rng: Rng, rows: int, width: int) -> np.ndarray:
    if isinstance(rng, np.random.RandomState):
        return rng.binomial(1, 0.5, (rows, width)).astype(bool)
    return rng.random((rows, width)) < 0.5


def _pair_swaps(rng: Rng, rows: int, items: int) -> np.ndarray:
    if isinstance(rng, np.random.RandomState):
        # The reference draws a 2 × 2 matrix per item and keeps its upper off-diagonal entry.
        return rng.binomial(1, 0.5, (rows, items, 2, 2))[:, :, 0, 1].astype(bool)
    return rng.random((rows, items)) < 0.5


def _zscored_packed(deltas: np.ndarray) -> np.ndarray:
    """m1's scores (0) then m2's (Δ), z-scored together; a metric that never differs stays 0."""
    packed = np.concatenate([np.zeros(len(deltas)), deltas])
    if not np.any(packed != packed[0]):
        return np.zeros_like(packed)
    return stats.zscore(packed)


def _hybrid_slots(human: np.ndarray, z_better: np.ndarray, z_worse: np.ndarray):
    """What every draw of :func:`_permutation_sig_diff` needs, computed once per pair of metrics.

    A draw takes each item's m1 score from one metric (``s1``: from ``worse``) and its m2 score from
    one metric (``s2``), so an item's hybrid difference is one of four values, ``D[i, 2·s1 + s2]``
    (the same subtraction of the same two floats as the hybrid's own); the second hybrid of the draw
    takes the other four choices, ``D[i, 3 − c]``. The calibrated count of a hybrid is
    ``ties + max over ε of Σ_{|d| > ε} (same_sign − tie)`` (the human ties all agree when every item is
    tied; an item above ε agrees when its sign is the people's). Going down from the largest |d|, that
    sum rises only at a human tie, so the maximum is at ε below every |d| or at the end of a group of
    equal |D| that holds a tie's entry: the ``K`` candidates. Each (item, choice) entry is put in the
    slot of the candidates it counts for (``β``: how many candidates lie below it), its ±1 as two
    counts; a draw is then one gather per item and a histogram of ``2 (K + 1)`` slots per row.

    Returns ``(codes, slots, ties)``: ``codes`` (items × 4) the slot ``2β + (u > 0)`` of each
    entry, or ``2 (K + 1)`` (a slot that is never read) when it counts for nothing; ``slots`` the
    histogram's width; ``ties`` the number of items people tied."""
    n = len(human)
    b1, b2, w1, w2 = z_better[:n], z_better[n:], z_worse[:n], z_worse[n:]
    d = np.stack([b2 - b1, w2 - b1, b2 - w1, w2 - w1], axis=1)
    hs = np.sign(human)
    tie = hs == 0
    same_sign = (np.sign(d) == hs[:, None]) & ~tie[:, None]
    u = same_sign.astype(np.int8) - tie[:, None].astype(np.int8)
    _, group = np.unique(np.abs(d).ravel(), return_inverse=True)
    group = group.reshape(d.shape)
    candidates = np.unique(group[np.broadcast_to(tie[:, None], d.shape)])
    beta = np.searchsorted(candidates, group, side="left")
    k = len(candidates)
    # intp, not int32: bincount and take would convert every row block to it.
    codes = np.where(u == 0, 2 * (k + 1), 2 * beta + (u > 0)).astype(np.intp)
    return codes, 2 * (k + 1) + 1, int(tie.sum())


def _best_counts(codes_flat: np.ndarray, index: np.ndarray, slots: int, ties: int) -> np.ndarray:
    """The calibrated count of agreeing items of each row of a block of draws (see :func:`_hybrid_slots`):
    ``index`` (rows × items) picks each item's entry in ``codes_flat``."""
    rows = index.shape[0]
    code = np.take(codes_flat, index)
    code += (np.arange(rows, dtype=np.intp) * slots)[:, None]
    counts = np.bincount(code.ravel(), minlength=rows * slots).reshape(rows, slots)[:, :-1]
    steps = counts[:, 1::2] - counts[:, 0::2]  # Σ u per candidate slot
    # U_t = Σ_{slots ≥ t}: the suffix sums, the first one (t = 0) being ε below every |d|.
    suffix = np.cumsum(steps[:, ::-1], axis=1)[:, ::-1]
    return ties + suffix.max(axis=1)


def _permutation_sig_diff(human, better, worse, *, n_permutations: int, rng: Rng) -> float:
    n = len(human)
    z_worse, z_better = _zscored_packed(worse), _zscored_packed(better)

    def _diffs(packed: np.ndarray) -> np.ndarray:
        return packed[..., n:] - packed[..., :n]

    observed_better = best_agreements_rows(human, _diffs(z_better)[None, :])[0]
    observed_worse = best_agreements_rows(human, _diffs(z_worse)[None, :])[0]
    observed = observed_better / n - observed_worse / n
    codes, slots, ties = _hybrid_slots(human, z_better, z_worse)
    first_codes = codes.ravel()  # the first hybrid takes choice c ...
    second_codes = codes[:, ::-1].ravel()  # ... the second the other four: 3 − c
    base = np.arange(0, 4 * n, 4, dtype=np.intp)
    at_least = 0
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        swap = _swaps(rng, rows, 2 * n).view(np.uint8)
        index = swap[:, :n] * np.uint8(2)
        index += swap[:, n:]
        index = index + base  # the entry (item, choice) of the first hybrid
        c1 = _best_counts(first_codes, index, slots, ties) / n
        c2 = _best_counts(second_codes, index, slots, ties) / n
        at_least += int((c2 - c1 >= observed).sum())
    return at_least / n_permutations if n_permutations else 1.0


def _permutation_sig_diff_sorted(human, better, worse, *, n_permutations: int, rng: Rng) -> float:
    """:func:`_permutation_sig_diff` as first written, sorting each hybrid (the reference
    implementation the benchmark measures against and the tests compare with)."""
    n = len(human)
    z_worse, z_better = _zscored_packed(worse), _zscored_packed(better)

    def _diffs(packed: np.ndarray) -> np.ndarray:
        return packed[..., n:] - packed[..., :n]

    observed_better = best_agreements_rows(human, _diffs(z_better)[None, :])[0]
    observed_worse = best_agreements_rows(human, _diffs(z_worse)[None, :])[0]
    observed = observed_better / n - observed_worse / n
    at_least = 0
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        swap = _swaps(rng, rows, 2 * n)
        first = np.where(swap, z_worse, z_better)  # the reference's m1 = w1·corr1 + w2·corr2
        second = np.where(swap, z_better, z_worse)
        c1 = best_agreements_rows(human, _diffs(first)) / n
        c2 = best_agreements_rows(human, _diffs(second)) / n
        at_least += int((c2 - c1 >= observed).sum())
    return at_least / n_permutations if n_permutations else 1.0


def _pairwise_permutation_sig_diff(human, better, worse, *, n_permutations: int, rng: Rng) -> float:
    n = len(human)
    agree_better = calibrated_agreement(human, better).astype(np.int64)
    agree_worse = calibrated_agreement(human, worse).astype(np.int64)
    observed = agree_better.sum() / n - agree_worse.sum() / n
    at_least = 0
    for start in range(0, n_permutations, _BLOCK):
        rows = min(_BLOCK, n_permutations - start)
        swap = _pair_swaps(rng, rows, n)
        c1 = np.where(swap, agree_worse, agree_better).sum(axis=1) / n
        c2 = np.where(swap, agree_better, agree_worse).sum(axis=1) / n
        at_least += int((c2 - c1 >= observed).sum())
    return at_least / n_permutations if n_permutations else 1.0


def permutation_p_value(
    human: np.ndarray,
    better: np.ndarray,
    worse: np.ndarray,
    *,
    n_permutations: int,
    rng: Rng,
    method: str = DEFAULT_SIGNIFICANCE_TEST,
) -> float:
    """The p-value that the metric ``better`` agrees with people more than ``worse`` on the same
    items (item-level acc23 with tie calibration), by the test named ``method`` (one of
    :data:`SIGNIFICANCE_TESTS`; see the module docstring). Raises ``ValueError`` for an unknown
    method. With no item or no draw the p-value is 1 (nothing is significant)."""
    if method not in SIGNIFICANCE_TESTS:
        raise ValueError(f"unknown significance test {method!r}: use one of {', '.join(SIGNIFICANCE_TESTS)}")
    human, better, worse = (np.asarray(v, dtype=float) for v in (human, better, worse))
    if len(human) == 0:
        return 1.0
    test = _permutation_sig_diff if method == PERMUTATION_SIG_DIFF else _pairwise_permutation_sig_diff
    return test(human, better, worse, n_permutations=n_permutations, rng=rng)
