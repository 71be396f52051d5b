"""Which metric to trust: meta-evaluation the way the WMT metrics task does it (pure functions).

The model level's pairwise accuracy lives with the correlations (:mod:`.correlation`); this module
holds what needs the judgments behind the comparisons.

Items (the item level)
    An :class:`Item` is one image of one compared pair (m2 against m1 in one language): its human
    score is the mean of its raters' −3 … +3 scores from m2's side, its metric score is
    metric(m2's caption) − metric(m1's caption). Each item is thus one pair of outputs, which is
    what mt-metrics-eval's item-level Kendall sees with two systems per item
    (``KendallWithTiesOpt(gold, metric, variant="acc23", num_sys=2, average_by="item",
    sample_rate=1.0)``, gold and metric packed as m1's scores (all 0) then m2's).

acc23 with tie calibration (Deutsch et al. 2023, "Ties Matter")
    The metric decides "m2 better", "tie" or "m1 better" for an item: a tie when |Δmetric| ≤ ε.
    acc23 is the share of items where that decision equals the sign of the human score (a human
    score of exactly 0 is a tie, which only a metric tie matches). ε is chosen to maximise acc23 over
    the candidates 0 and every distinct |Δmetric| (a threshold between two of them decides nothing
    differently), and among equal maxima the smallest ε: the same search as mt-metrics-eval's
    ``tau_optimization`` with ``sample_rate=1``, done with sorting and cumulative counts instead of
    a Python loop. τ_23 = 2 × acc23 − 1 on the same decisions, so one ε maximises both.
    :func:`tie_calibrated_pairs` is the same over every pair of captions with absolute ratings
    (the per-caption agreement; ``average_by="none"``).

Intervals
    95% percentile bootstrap over items, ε re-calibrated in each resample (the interval is that of
    the calibrated accuracy, not of one fixed ε); "all" resamples within each language and pools.

Is one metric better than another? (:func:`trust_table`, :mod:`.significance`)
    For each two metrics on the same items, mt-metrics-eval's ``PermutationSigDiff`` with
    ``KendallWithTiesOpt`` (the default): each metric's packed scores (m1's zeros, then m2's Δ) are
    z-scored, every one of the 2 × items scores is taken from one metric or the other with
    probability 1/2 in each of ``n_permutations`` draws, both hybrids are re-calibrated, and the
    p-value that the better metric is better is the share of draws whose difference in accuracy is
    at least the observed one. ``PairwisePermutationSigDiff`` (its pairwise variant: each metric's
    decisions at its own ε, swapped per item, no re-calibration) is a named option; the table
    records which test it used (``significance_test``). Both give the reference's p-values from the
    reference's swaps (the tests pin them). Metrics are sorted by accuracy, equal accuracies by name
    as the reference does; significance clusters as mt-metrics-eval's ``AssignRanks``: the rank
    increases at a metric only when some metric above it, since the current cluster began, is
    significantly better (p ≤ ``alpha``).

Soft pairwise accuracy (WMT24, :func:`with_soft_pairwise_accuracy`)
    Per comparison, the p-value that m2 beats m1 for people, by a permutation test over images
    (each image's score from m2's side changes sign with probability 1/2; the statistic is the sum),
    against the same p-value from the metric's per-caption deltas, with the same draws. The soft
    pairwise accuracy of a group of comparisons is 1 − the mean absolute difference of the two.

Numbers that are undefined are None, never NaN.

One module per part: ``acc23`` (items, tie calibration, intervals), ``significance`` (the two
permutation tests between metrics), ``trust`` (clusters, the trust table), ``soft_pairwise`` (the model level from the items).
"""

from evaluation.research.meta_evaluation.acc23 import (
    ACC23_LABEL,
    DEFAULT_N_PERMUTATIONS,
    MAX_EXACT_PAIRS,
    MIN_ITEMS,
    SIGNIFICANCE_LEVEL,
    Item,
    TieCalibrated,
    tie_calibrated,
    tie_calibrated_pairs,
)
from evaluation.research.meta_evaluation.significance import (
    DEFAULT_SIGNIFICANCE_TEST,
    PAIRWISE_PERMUTATION_SIG_DIFF,
    PERMUTATION_SIG_DIFF,
    SIGNIFICANCE_TESTS,
    permutation_p_value,
)
from evaluation.research.meta_evaluation.soft_pairwise import (
    comparison_gaps,
    sign_flip_p_values,
    with_gaps,
    with_soft_pairwise_accuracy,
)
from evaluation.research.meta_evaluation.trust import (
    LanguageVerdict,
    MetricVerdict,
    Status,
    TrustTable,
    assign_ranks,
    language_verdict,
    trust_table,
)

__all__ = [
    "ACC23_LABEL",
    "DEFAULT_N_PERMUTATIONS",
    "DEFAULT_SIGNIFICANCE_TEST",
    "Item",
    "LanguageVerdict",
    "MAX_EXACT_PAIRS",
    "MIN_ITEMS",
    "MetricVerdict",
    "PAIRWISE_PERMUTATION_SIG_DIFF",
    "PERMUTATION_SIG_DIFF",
    "SIGNIFICANCE_TESTS",
    "SIGNIFICANCE_LEVEL",
    "Status",
    "TieCalibrated",
    "TrustTable",
    "assign_ranks",
    "comparison_gaps",
    "language_verdict",
    "permutation_p_value",
    "sign_flip_p_values",
    "tie_calibrated",
    "tie_calibrated_pairs",
    "trust_table",
    "with_gaps",
    "with_soft_pairwise_accuracy",
]
