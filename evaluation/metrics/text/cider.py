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

**Document frequencies from a named corpus.** vrama91/cider's scorer also takes a precomputed df
file (``df_mode="coco-val-df"``): a pickle of the df counts of a large reference corpus and its
``ref_len``, log of that corpus's number of images, used in place of the evaluated set's own. A
small slice (one image, a few images of one language) makes the corpus-mode IDF unstable or zero
(one image: ``log(1) - log(1) = 0`` for every n-gram of its references), so
:class:`DocumentFrequency` carries such counts (n-gram tuple -> number of images whose references
contain it, and that number of images) and every function here accepts one; n-grams the corpus
never saw have df 0, hence ``log(max(1, 0)) = 0`` and the full weight ``log(n_documents)``, as in the
reference code. Its ``name`` is the df source of the score's signature (``test`` when the df comes
from the evaluated set, the default).

Here the tf-idf vectors are rows of the integer n-gram tables of
:class:`~evaluation.metrics.text.preprocess.TokenCorpus`, whose rows of one n-gram and one image are
neighbours (the candidate's first); the dot products become products of neighbouring rows and a few
``bincount`` sums, instead of one Python dict walk per (candidate, reference) pair.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import MetricResult
from .preprocess import TokenCorpus

__all__ = [
    "DF_FROM_TEST",
    "SIGMA",
    "DocumentFrequency",
    "cider",
    "cider_d",
    "cider_from_corpus",
    "cider_variants",
    "document_frequency",
]

SIGMA = 6.0
# The df source name of the default: the references of the evaluated images (the server's behaviour).
DF_FROM_TEST = "test"


@dataclass(frozen=True, eq=False)
class DocumentFrequency:
    """Document frequencies of a reference corpus: ``counts[ngram]`` = images whose references contain it.

    ``n_documents`` is that corpus's number of images (the reference code's ``ref_len`` is its log);
    ``name`` names the source for the score's signature (``refset:<name>``, ``file:<sha256 prefix>``).
    """

    name: str
    n_documents: int
    counts: Mapping[tuple[str, ...], int]
    n: int = 4

    def __post_init__(self):
        if self.n_documents < 1:
            raise ValueError(f"the df corpus {self.name!r} has no images")


def document_frequency(
    references: Mapping[Hashable, Sequence[Sequence[str]]], *, name: str, n: int = 4
) -> DocumentFrequency:
    """Count 1..n-gram document frequencies over tokenised ``references`` (image -> token lists).

    An image counts once per n-gram however many of its references contain it, as the reference
    code's ``compute_doc_freq``. Images without references do not count as documents. Tokenise the
    corpus exactly as the scored captions, or its n-grams will not meet theirs.
    """
    if name == DF_FROM_TEST:
        raise ValueError(f"{DF_FROM_TEST!r} names the evaluated set's own df; name the corpus otherwise")
    counts: dict[tuple[str, ...], int] = {}
    documents = 0
    for key, refs in references.items():
        if isinstance(refs, str):
            raise TypeError(f"references of {key!r} must be a list of token lists, not a string")
        if not refs:
            continue
        documents += 1
        grams = set()
        for tokens in refs:
            if isinstance(tokens, str):
                raise TypeError(f"a reference of {key!r} is a string, expected a list of tokens")
            tokens = tuple(tokens)
            for k in range(1, n + 1):
                grams.update(tokens[i : i + k] for i in range(len(tokens) - k + 1))
        for gram in grams:
            counts[gram] = counts.get(gram, 0) + 1
    return DocumentFrequency(name=name, n_documents=documents, counts=counts, n=n)


def cider(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    n: int = 4,
    df: DocumentFrequency | None = None,
) -> MetricResult:
    """CIDEr (vrama91/cider) of tokenised ``candidates`` against ``references`` (``df``: see the module)."""
    return cider_from_corpus(TokenCorpus.build(candidates, references), n=n, variant="CIDEr", df=df)


def cider_d(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    n: int = 4,
    sigma: float = SIGMA,
    df: DocumentFrequency | None = None,
) -> MetricResult:
    """CIDEr-D (COCO server, pycocoevalcap ``Cider``) of tokenised ``candidates`` against ``references``."""
    corpus = TokenCorpus.build(candidates, references)
    return cider_from_corpus(corpus, n=n, sigma=sigma, variant="CIDEr-D", df=df)


def cider_from_corpus(
    corpus: TokenCorpus,
    *,
    variant: str = "CIDEr-D",
    n: int = 4,
    sigma: float = SIGMA,
    df: DocumentFrequency | None = None,
) -> MetricResult:
    """CIDEr or CIDEr-D (``variant``) of an already interned corpus (shares n-gram tables with BLEU)."""
    return cider_variants(corpus, n=n, sigma=sigma, variants=(variant,), df=df)[0]


def cider_variants(
    corpus: TokenCorpus,
    *,
    n: int = 4,
    sigma: float = SIGMA,
    variants: Sequence[str] = ("CIDEr", "CIDEr-D"),
    df: DocumentFrequency | None = None,
) -> list[MetricResult]:
    """The requested variants in one pass (the tf-idf vectors and the join are shared).

    ``df``: document frequencies of a named corpus instead of the evaluated images' references.
    """
    unknown = set(variants) - {"CIDEr", "CIDEr-D"}
    if unknown:
        raise ValueError(f"unknown CIDEr variant(s) {sorted(unknown)}; use 'CIDEr' or 'CIDEr-D'")
    if df is not None and df.n < n:
        raise ValueError(f"the df corpus {df.name!r} counts n-grams up to {df.n}, CIDEr needs {n}")
    counts = corpus.ngrams(n)
    n_images = corpus.n_images
    sentence = counts.sentence

    if df is None:
        # Document frequency: the number of evaluated images whose references contain the n-gram.
        frequency = counts.document_frequency().astype(np.float64)
        log_documents = np.log(float(n_images))
    else:
        frequency = np.fromiter(
            (df.counts.get(gram, 0) for gram in _gram_tuples(corpus, n, counts.n_grams)),
            dtype=np.float64,
            count=counts.n_grams,
        )
        log_documents = np.log(float(df.n_documents))
    weight = log_documents - np.log(np.maximum(1.0, frequency))
    count, gram = counts.count, counts.gram

    # |vector| per (sentence, order), one bincount per order block (the rows come order by order):
    # each sums a sentence's rows in the sequence one bincount over ``sentence * n + order`` would,
    # without that index array nor the tf-idf value of every row (10M rows at 50,000 images).
    blocks = list(zip(counts.order_starts[:-1], counts.order_starts[1:]))
    norm = np.zeros((corpus.n_sentences, n))
    for k, (first, stop) in enumerate(blocks):
        if stop > first:
            squares = count[first:stop] * weight[gram[first:stop]]
            squares *= squares
            norm[:, k] = np.bincount(sentence[first:stop], weights=squares, minlength=corpus.n_sentences)
    np.sqrt(norm, out=norm)
    bigrams = np.maximum(corpus.lengths - 1, 0)

    # Pair every candidate row with the reference rows of the same (gram, image) group; those share
    # its n-gram, hence its weight and its order.
    matches = counts.matches
    candidate_rows, n_shared, shared = matches.candidate_rows, matches.n_references, matches.reference_rows
    shared_weight = np.repeat(weight[gram[candidate_rows]], n_shared)
    hyp = np.repeat(count[candidate_rows], n_shared) * shared_weight
    ref = count[shared] * shared_weight
    del shared_weight
    shared_reference = sentence[shared] - n_images
    # The pairs of order k are those of the candidate rows in the order's block.
    pair_ends = np.zeros(len(candidate_rows) + 1, dtype=np.int64)
    np.cumsum(n_shared, out=pair_ends[1:])
    pair_blocks = pair_ends[np.searchsorted(candidate_rows, counts.order_starts)]

    ref_sentences = np.arange(n_images, corpus.n_sentences)
    ref_image = corpus.ref_image
    norm_product = norm[ref_image] * norm[ref_sentences]
    delta = (bigrams[ref_image] - bigrams[ref_sentences]).astype(np.float64)
    penalty = np.power(np.e, -(delta**2) / (2 * sigma**2))
    n_refs = np.diff(corpus.ref_starts).astype(np.float64)

    results = []
    for variant in variants:
        product = np.minimum(hyp, ref) if variant == "CIDEr-D" else hyp.copy()
        product *= ref
        similarity = np.zeros((corpus.n_references, n))
        for k, (first, stop) in enumerate(zip(pair_blocks[:-1], pair_blocks[1:])):
            if stop > first:
                similarity[:, k] = np.bincount(
                    shared_reference[first:stop], weights=product[first:stop], minlength=corpus.n_references
                )
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


def _gram_tuples(corpus: TokenCorpus, n: int, n_grams: int) -> list[tuple[str, ...]]:
    """The token tuple of every n-gram id of ``corpus.ngrams(n)``, to look up an external df.

    The ids are dense ranks, order by order, of (id of the (k-1)-gram prefix, last token), with
    unigram ids equal to token ids (see ``preprocess._count_ngrams``), i.e. lexicographic over
    token ids within each order; ``np.unique`` gives the same ranks. The total is checked against
    the corpus's own count so that a change of that numbering fails loudly instead of misweighting.
    """
    words = list(corpus.vocabulary)  # index = token id (insertion order)
    vocab = len(words)
    tokens, starts = corpus.tokens, corpus.starts
    end = np.repeat(starts[1:], np.diff(starts))  # end of each position's sentence
    positions = np.arange(len(tokens), dtype=np.int64)
    local = tokens  # id within its order of the k-gram starting at each of ``positions``
    previous: list[tuple[str, ...]] = [(word,) for word in words]
    result = list(previous)
    for k in range(2, n + 1):
        fits = positions + (k - 1) < end[positions]
        positions, local = positions[fits], local[fits]
        if not len(positions):
            break
        keys = local * vocab + tokens[positions + (k - 1)]
        unique, local = np.unique(keys, return_inverse=True)
        previous = [
            previous[p] + (words[t],) for p, t in zip((unique // vocab).tolist(), (unique % vocab).tolist())
        ]
        result.extend(previous)
    if len(result) != n_grams:
        raise RuntimeError(f"n-gram numbering changed: {len(result)} tuples for {n_grams} ids")
    return result
