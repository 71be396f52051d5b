"""How fast the significance tests between metrics and the soft pairwise accuracy's p-values are.

    .venv/bin/python benchmarks/bench_significance.py [--items 300] [--draws 500]

On synthetic items of one language (people's mean −3…+3 score, two metrics' Δ, seeded) it times:

* ``PermutationSigDiff`` (the platform's default) and ``PairwisePermutationSigDiff`` at ``--draws``
  draws; with a clone of google-research/mt-metrics-eval (``MT_METRICS_EVAL``, default
  /work/ref/mt-metrics-eval) also the reference's own functions on the same items and the same number of
  draws (the reference), and it checks that the p-values agree when the platform draws the reference's
  swaps;
* one comparison's soft-pairwise p-values: exact enumeration at 18 images (the largest exact size) and
  10,000 draws (the size that bounds the Monte-Carlo error at 0.01) on ``--items`` images.

Timings are the best of three runs on this machine; the numbers are speed only (synthetic data).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.research.meta_evaluation.significance import (  # noqa: E402
    PAIRWISE_PERMUTATION_SIG_DIFF,
    PERMUTATION_SIG_DIFF,
    permutation_p_value,
)
from evaluation.research.meta_evaluation.soft_pairwise import (  # noqa: E402
    SPA_EXACT_MAX_IMAGES,
    sign_flip_p_values,
    spa_draws,
)


def best_of(fn, repeat: int = 3) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(25)
    n, k = args.items, args.draws
    human = np.round(rng.integers(-9, 10, n) / 3, 6)
    good = np.round(0.004 * human + rng.normal(0, 0.04, n), 3)
    coarse = np.round(0.003 * human + rng.normal(0, 0.04, n), 2)

    print(f"| test ({n} items, {k} draws) | seconds | p-value |")
    print("|---|---|---|")
    ours = {}
    for method in (PERMUTATION_SIG_DIFF, PAIRWISE_PERMUTATION_SIG_DIFF):
        seconds, p = best_of(
            lambda method=method: permutation_p_value(
                human, good, coarse, n_permutations=k, rng=np.random.RandomState(0), method=method
            )
        )
        ours[method] = p
        print(f"| platform {method} | {seconds:.3f} | {p:.4f} |")

    reference = Path(os.environ.get("MT_METRICS_EVAL", "/work/ref/mt-metrics-eval"))
    if (reference / "mt_metrics_eval" / "stats.py").is_file():
        sys.path.insert(0, str(reference))
        from mt_metrics_eval import stats

        def corr(deltas):
            return stats.Correlation(2, [0.0] * n + human.tolist(), [0.0] * n + deltas.tolist())

        params = stats.PermutationSigDiffParams(block_size=k)

        def perm():
            np.random.seed(0)
            return stats.PermutationSigDiff(
                corr(coarse), corr(good), stats.KendallWithTiesOpt, "item", k, params, sample_rate=1.0
            )[0]

        def pairwise():
            np.random.seed(0)
            return stats.PairwisePermutationSigDiff(corr(coarse), corr(good), "acc23", "item", k, params)[0]

        theirs = {}
        for method, fn in ((PERMUTATION_SIG_DIFF, perm), (PAIRWISE_PERMUTATION_SIG_DIFF, pairwise)):
            seconds, theirs[method] = best_of(fn, repeat=1)
            print(f"| mt-metrics-eval {method} (reference) | {seconds:.3f} | {theirs[method]:.4f} |")
        same = all(ours[m] == theirs[m] for m in ours)
        print(f"\nSame p-values as the reference from the same swaps: {'yes' if same else 'NO'}")
    else:
        print(f"(no mt-metrics-eval clone at {reference}: the reference rows are left out)")

    print()
    print("| soft pairwise p-values of one comparison | patterns | seconds |")
    print("|---|---|---|")
    columns = np.column_stack([human, good, coarse])
    exact = columns[:SPA_EXACT_MAX_IMAGES]
    seconds, _ = best_of(lambda: sign_flip_p_values(exact, n_permutations=0))
    print(f"| exact, {SPA_EXACT_MAX_IMAGES} images | {2**SPA_EXACT_MAX_IMAGES:,} | {seconds:.3f} |")
    draws = spa_draws(n)
    seconds, _ = best_of(
        lambda: sign_flip_p_values(columns, n_permutations=draws, rng=np.random.default_rng(0))
    )
    print(f"| drawn, {n} images (error bound 0.01) | {draws:,} | {seconds:.3f} |")
    seconds, _ = best_of(
        lambda: sign_flip_p_values(columns, n_permutations=1000, rng=np.random.default_rng(0))
    )
    print(f"| drawn, {n} images, the former 1,000 draws (error bound 0.032) | 1,000 | {seconds:.3f} |")


if __name__ == "__main__":
    main()
