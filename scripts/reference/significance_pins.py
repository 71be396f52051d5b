"""Print the p-values that google-research/mt-metrics-eval's own code gives on fixed inputs.

The tests of ``evaluation.research.meta_evaluation.significance`` pin the platform's two
permutation tests against these numbers (tests/evaluation/test_significance.py). Run it with a clone
of https://github.com/google-research/mt-metrics-eval (it needs only numpy and scipy):

    MT_METRICS_EVAL=/path/to/mt-metrics-eval .venv/bin/python scripts/reference/significance_pins.py

(default path: /work/ref/mt-metrics-eval). It prints the inputs and, for each case, the reference's
p-value after ``np.random.seed(seed)``, with early stopping off (block_size = k) and every pair
enumerated (sample_rate = 1.0). Nothing of the reference is copied into this repository: it is
imported from the clone.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.environ.get("MT_METRICS_EVAL", "/work/ref/mt-metrics-eval"))

from mt_metrics_eval import stats  # noqa: E402


def inputs() -> dict[str, list[float]]:
    """Items of one language: human scores as means of three raters' −3…+3 judgments (ties at 0
    included), metric deltas rounded so that some |Δ| repeat."""
    rng = np.random.default_rng(25)
    n = 40
    human = np.round(rng.integers(-9, 10, n) / 3, 6)
    human[::7] = 0.0
    good = np.round(0.01 * human + rng.normal(0, 0.04, n), 2)
    coarse = np.round(0.008 * human + rng.normal(0, 0.04, n), 1)
    noise = np.round(rng.normal(0, 0.05, n), 2)
    return {
        "human": human.tolist(),
        "good": good.tolist(),
        "coarse": coarse.tolist(),
        "noise": noise.tolist(),
    }


def corr(human: list[float], deltas: list[float]) -> stats.Correlation:
    n = len(human)
    return stats.Correlation(2, [0.0] * n + list(human), [0.0] * n + list(deltas))


def main() -> None:
    data = inputs()
    k = 300
    params = stats.PermutationSigDiffParams(block_size=k)
    cases = []
    for better, worse in (("good", "coarse"), ("good", "noise"), ("coarse", "noise")):
        for seed in (0, 1):
            c1, c2 = corr(data["human"], data[worse]), corr(data["human"], data[better])
            np.random.seed(seed)
            p_perm = stats.PermutationSigDiff(
                c1, c2, stats.KendallWithTiesOpt, "item", k, params, variant="acc23", sample_rate=1.0
            )[0]
            np.random.seed(seed)
            p_pair = stats.PairwisePermutationSigDiff(c1, c2, "acc23", "item", k, params, sample_rate=1.0)[0]
            cases.append(
                {
                    "better": better,
                    "worse": worse,
                    "seed": seed,
                    "k": k,
                    "PermutationSigDiff": p_perm,
                    "PairwisePermutationSigDiff": p_pair,
                }
            )
    print(json.dumps({"inputs": data, "cases": cases}, indent=1))


if __name__ == "__main__":
    main()
