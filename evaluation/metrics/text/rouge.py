"""ROUGE-L exactly as the COCO evaluation server computes it (pycocoevalcap 1.2, ``rouge/rouge.py``).

Per image: the longest common subsequence (LCS) of the candidate with each reference gives
precision ``lcs / len(candidate)`` and recall ``lcs / len(reference)``; the maxima over the references
(taken separately) combine into ``F = (1 + beta^2) P R / (R + beta^2 P)`` with beta = 1.2, or 0 when
either maximum is 0. The corpus score is the mean over images.

One quirk is kept for exactness: the reference splits captions with ``str.split(" ")``, so an empty
caption is one empty token. An empty candidate therefore scores 0, except against an empty reference,
where it scores 1.

Speed: the reference fills a Python list-of-lists DP table per pair. Here the LCS length comes from
the bit-parallel algorithm of Allison & Dix (1986) in Hyyrö's (2004) form, run over all pairs at once
in numpy uint64 words (candidates up to 64 tokens; longer ones use Python big integers). For each
reference token, ``M`` is the bit mask of candidate positions holding that token, and the state
``V`` (initially all ones) is updated as ``U = V & M; V = (V + U) | (V - U)``; the LCS length is the
number of zero bits left among the candidate's positions.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from . import MetricResult
from .preprocess import TokenCorpus

__all__ = ["BETA", "lcs_length", "rouge_l", "rouge_l_from_corpus"]

BETA = 1.2
_WORD = 64


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences (bit-parallel, any length)."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return 0
    masks: dict[Hashable, int] = {}
    for position, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << position)
    full = (1 << len(b)) - 1
    state = full
    for token in a:
        match = masks.get(token)
        if match:
            low = state & match
            state = ((state + low) | (state - low)) & full
    return len(b) - state.bit_count()


def rouge_l(
    candidates: Mapping[Hashable, Sequence[str]],
    references: Mapping[Hashable, Sequence[Sequence[str]]],
    *,
    beta: float = BETA,
) -> MetricResult:
    """ROUGE-L of tokenised ``candidates`` (key -> tokens) against ``references`` (key -> token lists)."""
    return rouge_l_from_corpus(TokenCorpus.build(candidates, references), beta=beta)


def rouge_l_from_corpus(corpus: TokenCorpus, *, beta: float = BETA) -> MetricResult:
    """ROUGE-L of an already interned corpus."""
    n_images = corpus.n_images
    tokens, starts = _with_empty_token(corpus)
    lengths = np.diff(starts)
    ref_image = corpus.ref_image
    cand_len = lengths[:n_images]
    ref_len = lengths[n_images:]

    lcs = np.zeros(corpus.n_references, dtype=np.int64)
    short = cand_len[ref_image] <= _WORD
    if short.any():
        lcs[short] = _lcs_words(tokens, starts, n_images, ref_image, cand_len, np.flatnonzero(short))
    for ref in np.flatnonzero(~short).tolist():
        image = int(ref_image[ref])
        sentence = n_images + ref
        lcs[ref] = lcs_length(
            tokens[starts[image] : starts[image + 1]].tolist(),
            tokens[starts[sentence] : starts[sentence + 1]].tolist(),
        )

    precision = lcs / cand_len[ref_image].astype(np.float64)
    recall = lcs / ref_len.astype(np.float64)
    group_starts = corpus.ref_starts[:-1]
    precision_max = np.maximum.reduceat(precision, group_starts)
    recall_max = np.maximum.reduceat(recall, group_starts)
    beta2 = beta**2
    with np.errstate(invalid="ignore", divide="ignore"):
        f_score = ((1 + beta2) * precision_max * recall_max) / (recall_max + beta2 * precision_max)
    scores = np.where((precision_max != 0) & (recall_max != 0), f_score, 0.0)
    return MetricResult(
        name="ROUGE-L", score=float(np.mean(scores)), per_caption=dict(zip(corpus.keys, scores.tolist()))
    )


def _with_empty_token(corpus: TokenCorpus) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and offsets where every empty sentence is one empty-string token (see the docstring)."""
    lengths = corpus.lengths
    empty = lengths == 0
    if not empty.any():
        return corpus.tokens, corpus.starts
    empty_id = corpus.vocabulary.get("", len(corpus.vocabulary))
    new_lengths = np.where(empty, 1, lengths)
    starts = np.zeros(len(new_lengths) + 1, dtype=np.int64)
    np.cumsum(new_lengths, out=starts[1:])
    tokens = np.full(int(starts[-1]), empty_id, dtype=np.int64)
    keep = np.repeat(~empty, new_lengths)
    tokens[keep] = corpus.tokens
    return tokens, starts


def _lcs_words(
    tokens: np.ndarray,
    starts: np.ndarray,
    n_images: int,
    ref_image: np.ndarray,
    cand_len: np.ndarray,
    refs: np.ndarray,
) -> np.ndarray:
    """LCS lengths of the given reference sentences with their candidates (candidates <= 64 tokens)."""
    vocab = int(tokens.max()) + 1 if len(tokens) else 1
    # Bit mask of the candidate positions of each (image, token).
    cand_tokens = tokens[: starts[n_images]]
    cand_image = np.repeat(np.arange(n_images, dtype=np.int64), cand_len)
    bit = np.arange(len(cand_tokens), dtype=np.int64) - starts[:n_images][cand_image]
    usable = bit < _WORD
    key = cand_image[usable] * vocab + cand_tokens[usable]
    bits = np.left_shift(np.uint64(1), bit[usable].astype(np.uint64))
    ordering = np.argsort(key, kind="stable")
    key, bits = key[ordering], bits[ordering]
    if len(key):
        first = np.ones(len(key), dtype=bool)
        first[1:] = key[1:] != key[:-1]
        group = np.flatnonzero(first)
        mask_key, mask = key[group], np.bitwise_or.reduceat(bits, group)
    else:
        mask_key, mask = key, bits

    # Process the references longest first, so that at step j the references still running are a prefix.
    ref_sentence = n_images + refs
    ref_starts = starts[ref_sentence]
    ref_lengths = starts[ref_sentence + 1] - ref_starts
    by_length = np.argsort(-ref_lengths, kind="stable")
    ref_starts, ref_lengths = ref_starts[by_length], ref_lengths[by_length]
    images = ref_image[refs][by_length]
    m = cand_len[images].astype(np.uint64)
    full = np.where(m == _WORD, np.uint64(2**64 - 1), (np.uint64(1) << m) - np.uint64(1))
    state = full.copy()
    active = len(refs)
    for j in range(int(ref_lengths.max()) if len(refs) else 0):
        while active and ref_lengths[active - 1] <= j:
            active -= 1
        wanted = images[:active] * vocab + tokens[ref_starts[:active] + j]
        slot = np.searchsorted(mask_key, wanted)
        slot[slot == len(mask_key)] = 0
        match = np.where(mask_key[slot] == wanted, mask[slot], np.uint64(0)) if len(mask_key) else 0
        current = state[:active]
        low = current & match
        state[:active] = (current + low) | (current - low)
    lcs = (m - np.bitwise_count(state & full)).astype(np.int64)
    out = np.empty(len(refs), dtype=np.int64)
    out[by_length] = lcs
    return out
