"""Bootstrap replicates of corpus scores: each metric recomputed on resampled image sets (pure).

A resample is a row of ``weights`` (shape ``(resamples, images)``, images in the corpus's key order):
how often each image is drawn. Its replicate is the corpus score the reference code would give the
resampled corpus, a drawn image entered as often as it is drawn, so an interval or a paired test over
replicates is of the statistic shown, not of a mean of per-image values standing in for it:

- BLEU-k (:func:`bleu_replicates`): the pooled counts are sums of per-image sufficient statistics, so
  a resample's are ``weights @ image_stats`` and the corpus formula applies to them
  (:func:`.bleu.corpus_bleu`);
- ROUGE-L and the CLIP scores, whose corpus score is the mean over images (:func:`mean_replicates`);
- CIDEr and CIDEr-D (:func:`cider_replicates`): the document frequencies are the resample's own (an
  image drawn twice counts twice, and the log of the resample's image count is the reference length),
  so every image's score changes with the resample and is recomputed (see the function);
- METEOR: :func:`.meteor.meteor_score` sends the summed segment statistics to the jar that scored them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import sparse

from .bleu import corpus_bleu
from .cider import SIGMA
from .preprocess import TokenCorpus

__all__ = ["bleu_replicates", "cider_replicates", "mean_replicates"]

# Floats of the per-chunk products that CIDEr's replicates hold at once (about 8 bytes each).
_CHUNK_FLOATS = 4_000_000


def mean_replicates(values: Sequence[float] | np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The mean of per-image ``values`` on each resample."""
    weights = np.asarray(weights, dtype=np.float64)
    return weights @ np.asarray(values, dtype=np.float64) / weights.sum(axis=1)


def bleu_replicates(image_stats: np.ndarray, weights: np.ndarray, *, n: int = 4) -> np.ndarray:
    """Corpus BLEU-1..n of each resample, shape ``(resamples, n)`` (``image_stats`` of a
    :class:`.bleu.BleuResult`). The sums are of integers, exact in float64."""
    return corpus_bleu(np.asarray(weights, dtype=np.float64) @ image_stats.astype(np.float64), n=n)


def cider_replicates(
    corpus: TokenCorpus,
    weights: np.ndarray,
    *,
    variants: Sequence[str] = ("CIDEr-D",),
    n: int = 4,
    sigma: float = SIGMA,
) -> dict[str, np.ndarray]:
    """CIDEr / CIDEr-D of each resample as pycocoevalcap's scorer computes it on the resampled corpus.

    With ``u(g) = idf(g)²`` every term of an image's score is linear in ``u``: the clipped numerator
    ``Σ min(h, r)·r·u``, the squared norms ``Σ h²·u`` and ``Σ r²·u`` of each order. So the per-(sentence,
    order) sums are sparse matrices times the matrix of ``u`` per resample, computed a chunk of resamples
    at a time. ``idf`` depends on an n-gram only through the set of images whose references hold it, so
    n-grams with the same set share one column: all n-grams in one image's references only (most of
    them) become one column per image, whose weight follows that image's draw count alone.
    """
    weights = np.asarray(weights)
    counts = corpus.ngrams(n)
    n_images = corpus.n_images
    if weights.ndim != 2 or weights.shape[1] != n_images:
        raise ValueError(f"weights must be (resamples, {n_images}), not {weights.shape}")
    column, d_multi = _idf_columns(corpus, counts)
    n_columns = n_images + 1 + d_multi.shape[0]
    sentence, count, gram, order = counts.sentence, counts.count.astype(np.float64), counts.gram, counts.order
    col = column[gram]

    n_refs_total = corpus.n_references
    is_candidate = sentence < n_images
    # Squared norms: rows (candidate image, order) and (reference, order).
    hyp_rows = sentence[is_candidate].astype(np.int64) * n + order[is_candidate]
    hyp = _csr(hyp_rows, col[is_candidate], count[is_candidate] ** 2, n_images * n, n_columns)
    ref_rows = (sentence[~is_candidate].astype(np.int64) - n_images) * n + order[~is_candidate]
    ref = _csr(ref_rows, col[~is_candidate], count[~is_candidate] ** 2, n_refs_total * n, n_columns)
    # Numerators: each candidate row with the reference rows of its (n-gram, image) group.
    matches = counts.matches
    pair_candidate = np.repeat(matches.candidate_rows, matches.n_references)
    pair_reference = matches.reference_rows
    pair_rows = (sentence[pair_reference].astype(np.int64) - n_images) * n + order[pair_candidate]
    h, r = count[pair_candidate], count[pair_reference]
    numerators = {
        variant: _csr(
            pair_rows,
            col[pair_candidate],
            (np.minimum(h, r) if variant == "CIDEr-D" else h) * r,
            n_refs_total * n,
            n_columns,
        )
        for variant in variants
    }
    stacked = sparse.vstack([hyp, ref, *numerators.values()], format="csr")
    del hyp, ref, numerators

    ref_image = corpus.ref_image
    bigrams = np.maximum(corpus.lengths - 1, 0)
    delta = (bigrams[ref_image] - bigrams[n_images:]).astype(np.float64)
    penalty = np.power(np.e, -(delta**2) / (2 * sigma**2))
    n_refs = np.diff(corpus.ref_starts).astype(np.float64)
    n_drawn = weights.sum(axis=1)
    if np.any(n_drawn != n_images):
        raise ValueError("every resample must draw as many images as the corpus has")
    log_documents = np.log(float(n_images))
    # u for a document frequency d = 0 .. n_images, as the reference: (log N - log max(1, d))².
    table = (log_documents - np.log(np.maximum(1.0, np.arange(n_images + 1, dtype=np.float64)))) ** 2
    # An image's score: the sum over its references and the orders of similarity / (n · its references)
    # · 10 (times the length penalty for CIDEr-D); as one sparse (image x (reference, order)) matrix.
    rows = np.repeat(ref_image, n)
    scale = np.repeat(10.0 / (n * n_refs[ref_image]), n)
    to_image = {
        variant: sparse.csr_matrix(
            (scale * (np.repeat(penalty, n) if variant == "CIDEr-D" else 1.0), (rows, np.arange(len(rows)))),
            shape=(n_images, n_refs_total * n),
        )
        for variant in variants
    }
    # Each (reference, order) row's candidate row: its image's, same order.
    hyp_of_ref = rows * n + np.tile(np.arange(n), n_refs_total)

    n_boot = weights.shape[0]
    chunk = max(1, min(n_boot, _CHUNK_FLOATS // max(1, stacked.shape[0] + n_columns)))
    out = {variant: np.empty(n_boot) for variant in variants}
    hyp_end, ref_end = n_images * n, n_images * n + n_refs_total * n
    for start in range(0, n_boot, chunk):
        drawn = np.ascontiguousarray(weights[start : start + chunk].T)  # (images, chunk)
        u = np.empty((n_columns, drawn.shape[1]))
        u[:n_images] = table[drawn]
        u[n_images] = table[0]
        if d_multi.shape[0]:
            u[n_images + 1 :] = table[np.rint(d_multi @ drawn.astype(np.float64)).astype(np.int64)]
        sums = stacked @ u
        np.sqrt(sums[:ref_end], out=sums[:ref_end])
        norm_product = sums[hyp_end:ref_end]
        norm_product *= sums[:hyp_end][hyp_of_ref]
        # The reference divides only by a product of non-zero norms (a zero norm has a zero numerator).
        norm_product[norm_product == 0] = 1.0
        for index, variant in enumerate(variants):
            first = ref_end + index * n_refs_total * n
            similarity = sums[first : first + n_refs_total * n]
            similarity /= norm_product
            scores = to_image[variant] @ similarity  # (images, chunk)
            scores *= drawn
            out[variant][start : start + drawn.shape[1]] = scores.sum(axis=0) / n_images
    return out


def _idf_columns(corpus: TokenCorpus, counts) -> tuple[np.ndarray, sparse.csr_matrix]:
    """Each n-gram's column of ``u`` and the image sets of the shared columns.

    Column ``i < n_images``: the n-grams in image ``i``'s references only (their df on a resample is
    image ``i``'s draw count); column ``n_images``: n-grams in no reference (df 0 on every resample);
    then one column per distinct set of two or more images, ``d_multi`` holding that set as a row of
    ones (its df on a resample is the sum of the set's draw counts)."""
    n_images = corpus.n_images
    first = counts.group_starts[:-1]
    with_reference = counts.group_sizes > counts.group_has_candidate
    grams = counts.gram[first[with_reference]]  # sorted by n-gram, then image
    images = corpus.image_of[counts.sentence[first[with_reference]]]
    frequency = np.bincount(grams, minlength=counts.n_grams)
    column = np.full(counts.n_grams, n_images, dtype=np.int64)
    single = frequency[grams] == 1
    column[grams[single]] = images[single]
    multi_grams, multi_images = grams[~single], images[~single]
    if not len(multi_grams):
        return column, sparse.csr_matrix((0, n_images))
    starts = np.flatnonzero(np.r_[True, multi_grams[1:] != multi_grams[:-1]])
    sets: dict[bytes, int] = {}
    owners = multi_grams[starts]
    rows, cols = [], []
    for gram, members in zip(owners.tolist(), np.split(multi_images, starts[1:])):
        key = members.tobytes()
        index = sets.get(key)
        if index is None:
            index = sets[key] = len(sets)
            rows.append(np.full(len(members), index))
            cols.append(members)
        column[gram] = n_images + 1 + index
    d_multi = sparse.csr_matrix(
        (np.ones(sum(map(len, cols))), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(sets), n_images),
    )
    return column, d_multi


def _csr(rows, cols, values, n_rows: int, n_cols: int) -> sparse.csr_matrix:
    """A sparse matrix with ``values`` summed at each (row, column)."""
    matrix = sparse.coo_matrix((values, (rows, cols)), shape=(n_rows, n_cols)).tocsr()
    matrix.sum_duplicates()
    return matrix
