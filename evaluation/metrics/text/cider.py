"""CIDEr and CIDEr-D exactly as their reference implementations compute them.

References:

- **CIDEr-D**: the COCO evaluation server's metric (paper 002, eq. 19-20), implemented by
  pycocoevalcap 1.2 ``cider/cider_scorer.py`` (whose class is called ``Cider`` but computes CIDEr-D)
  and identically by ``pyciderevalcap/ciderD/ciderD_scorer.py`` of github.com/vrama91/cider.
- **CIDEr**: ``pyciderevalcap/cider/cider_scorer.py`` of github.com/vrama91/cider, the implementation
  the XM3600 paper used with default parameters (paper 000, footnote 9); not on PyPI.

Both, with the default "corpus" IDF mode, do the following for n = 1..4:

- document frequency ``df(g)`` = number of evaluated images whose references contain n-gram ``g``;
  the IDF comes from the references of the images being evaluated, not from a fixed corpus;
- a sentence's vector has ``tf(g) * (log(N_images) - log(max(1, df(g))))`` per n-gram, where ``tf`` is
  the raw count (the paper's length normalisation cancels in the cosine), so an n-gram absent from
  all references still gets the full weight ``log(N_images)``;
- per reference, ``sim_n = sum_g h(g) r(g) / (|h| |r|)`` (no division when a norm is 0).
  CIDEr-D clips, ``sum_g min(h(g), r(g)) r(g)``, and multiplies by the Gaussian length penalty
  ``e ** (-(delta ** 2) / (2 sigma ** 2))``, sigma = 6. The reference measures ``delta`` as the
  difference of the **bigram** counts of candidate and reference (its ``length`` counts only
  n-grams with index 1), i.e. of ``max(len - 1, 0)``, not of the token counts; kept for exactness;
- the image score is ``10 * mean_n(sum over refs of sim_n) / n_refs``; the corpus score is the mean
  over images.

Here the tf-idf vectors are rows of the integer n-gram tables of
:class:`~evaluation.metrics.text.preprocess.TokenCorpus`; the dot products become one sort-join of
reference rows with candidate rows and a few ``bincount`` sums, instead of one Python dict walk per
(candidate, reference) pair.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from . import MetricResult
from .preprocess import TokenCorpus

__all__ = ["SIGMA", "cider", "cider_d", "cider_from_corpus", "cider_variants"]

SIGMA = 6.0


def cider(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    n: int = 4,
) -> MetricResult:
    """CIDEr (vrama91/cider) of tokenised ``candidates`` against ``references``."""
    return cider_from_corpus(TokenCorpus.build(candidates, references), n=n, variant="CIDEr")


def cider_d(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    n: int = 4,
    sigma: float = SIGMA,
) -> MetricResult:
    """CIDEr-D (COCO server, pycocoevalcap ``Cider``) of tokenised ``candidates`` against ``references``."""
    return cider_from_corpus(TokenCorpus.build(candidates, references), n=n, sigma=sigma, variant="CIDEr-D")


def cider_from_corpus(
    corpus: TokenCorpus, *, variant: str = "CIDEr-D", n: int = 4, sigma: float = SIGMA
) -> MetricResult:
    """CIDEr or CIDEr-D (``variant``) of an already interned corpus (shares n-gram tables with BLEU)."""
    return cider_variants(corpus, n=n, sigma=sigma, variants=(variant,))[0]


def cider_variants(
    corpus: TokenCorpus,
    *,
    n: int = 4,
    sigma: float = SIGMA,
    variants: Sequence[str] = ("CIDEr", "CIDEr-D"),
) -> list[MetricResult]:
    """The requested variants in one pass (the tf-idf vectors and the join are shared)."""
    unknown = set(variants) - {"CIDEr", "CIDEr-D"}
    if unknown:
        raise ValueError(f"unknown CIDEr variant(s) {sorted(unknown)}; use 'CIDEr' or 'CIDEr-D'")
    counts = corpus.ngrams(n)
    n_images = corpus.n_images
    sentence, order = counts.sentence, counts.order

    # Document frequency: the number of images whose references contain the n-gram.
    groups = counts.reference_groups
    document_frequency = np.bincount(groups.key // n_images, minlength=counts.n_grams).astype(np.float64)
    log_images = np.log(float(n_images))
    weight = log_images - np.log(np.maximum(1.0, document_frequency))
    value = counts.count * weight[counts.gram]

    slots = corpus.n_sentences * n
    norm = np.sqrt(np.bincount(sentence * n + order, weights=value * value, minlength=slots)).reshape(-1, n)
    bigrams = np.maximum(corpus.lengths - 1, 0)

    # Pair every candidate row with the reference rows of the same (gram, image) group.
    cand_rows, group = counts.candidate_matches
    sizes = groups.starts[group + 1] - groups.starts[group]
    within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    shared = groups.rows[np.repeat(groups.starts[group], sizes) + within]
    hyp = np.repeat(value[cand_rows], sizes)
    ref = value[shared]
    shared_index = (sentence[shared] - n_images) * n + order[shared]

    ref_sentences = np.arange(n_images, corpus.n_sentences)
    ref_image = corpus.ref_image
    norm_product = norm[ref_image] * norm[ref_sentences]
    delta = (bigrams[ref_image] - bigrams[ref_sentences]).astype(np.float64)
    penalty = np.power(np.e, -(delta**2) / (2 * sigma**2))
    n_refs = np.diff(corpus.ref_starts).astype(np.float64)

    results = []
    for variant in variants:
        product = np.minimum(hyp, ref) * ref if variant == "CIDEr-D" else hyp * ref
        similarity = np.bincount(shared_index, weights=product, minlength=corpus.n_references * n)
        similarity = similarity.astype(np.float64, copy=False)  # an empty bincount is int
        similarity = similarity.reshape(-1, n)
        nonzero = norm_product != 0
        similarity[nonzero] /= norm_product[nonzero]
        if variant == "CIDEr-D":
            similarity *= penalty[:, None]
        per_image = np.add.reduceat(similarity, corpus.ref_starts[:-1], axis=0)  # sums refs in order
        scores = per_image.mean(axis=1) / n_refs * 10.0
        results.append(
            MetricResult(
                name=variant,
                score=float(np.mean(scores)),
                per_caption=dict(zip(corpus.keys, scores.tolist())),
            )
        )
    return results
