"""Caption preprocessing: the platform's Unicode normalisation, and token interning.

The COCO evaluation server (paper 002, sec. 3.1) lowercases captions, tokenises them with the PTB
tokenizer and drops punctuation; the XM3600 paper (000, footnote 9) does the same ("remove punctuation
and lowercase") in 36 languages. :func:`normalise` is the platform's multilingual equivalent in pure
Python, the first step of the ``whitespace``, ``char`` and segmenter schemes
(:mod:`evaluation.metrics.text.schemes`, which turns raw captions into tokens):

``normalise(text)``
    1. Unicode NFC, so a decomposed "e + U+0301" and a precomposed "é" are the same token.
    2. ``str.lower()``, the lowercasing the COCO tooling uses (not ``casefold()``: casefold would also
       turn German "ß" into "ss" and Greek final sigma into "σ", which the references do not do).
       A second NFC pass follows, because lowercasing can produce decomposed sequences (Turkish "İ").
       ``lowercase=False`` skips this step (the cased column of the XM3600 export).
    3. Every Unicode *punctuation* character (general category P*: ``. , ? ! ' " - ( ) « » ¿ ¡ ، 。
       ， 、 「 」 “ ”`` ...) is replaced by a space. Replacing rather than deleting keeps the words on
       either side apart ("black-and-white" -> "black and white", French "l'homme" -> "l homme"),
       which matters more in the 30-odd space-separated languages than the occasional split of an
       English possessive ("dog's" -> "dog s"); the PTB tokenizer splits those too.
       *Symbols* (category S*: ``$ + ° © ™``, emoji) are kept: they carry meaning and PTB keeps them.
       Combining marks (M*), needed by Devanagari, Thai and others, are kept.
    4. Runs of whitespace collapse to one space, and the ends are stripped.

``TokenCorpus`` is the last step, shared by all metrics: it interns tokens into integer ids and
builds n-gram count tables with numpy, so the metrics never touch strings again.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from itertools import chain
from typing import NamedTuple

import numpy as np

__all__ = [
    "NgramCounts",
    "ReferenceGroups",
    "TokenCorpus",
    "check_references",
    "normalise",
]

# Planes that hold every punctuation character (Unicode 14-16): the BMP and the SMP.
_SCANNED_RANGES = (range(0x0000, 0x20000),)


@cache
def _punctuation_to_space() -> dict[int, str]:
    """Built on first use (one scan of ~130k code points, ~30 ms) rather than at import."""
    category = unicodedata.category
    return {cp: " " for cp in chain(*_SCANNED_RANGES) if category(chr(cp))[0] == "P"}


def normalise(text: str, *, lowercase: bool = True) -> str:
    """NFC, lowercase, punctuation to spaces, whitespace collapsed (see the module docstring)."""
    text = unicodedata.normalize("NFC", text)
    if lowercase:
        text = text.lower()
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
    return " ".join(text.translate(_punctuation_to_space()).split())


# --------------------------------------------------------------------------------------------------
# Interning: the shared numeric representation of one evaluation (candidates + their references).


def check_references(candidates: Mapping[Hashable, object], references: Mapping[Hashable, Sequence]) -> None:
    """Raise ``ValueError`` if there are no candidates or some candidate key has no reference."""
    if not candidates:
        raise ValueError("no candidate captions to score")
    missing = [key for key in candidates if not references.get(key)]
    if missing:
        shown = ", ".join(repr(key) for key in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        raise ValueError(f"{len(missing)} candidate(s) have no reference caption: {shown}{more}")


@dataclass(frozen=True, eq=False)
class NgramCounts:
    """Per-sentence n-gram counts of a :class:`TokenCorpus`, one row per distinct (sentence, n-gram).

    ``gram`` ids are global: n-grams of different lengths never share an id (ids grow with the
    order), and an n-gram has the same id in every sentence. Rows are sorted by (gram, sentence); as
    candidates are sentences ``0..n_images-1`` and references follow image by image, each gram's rows
    list its candidates by image, then its references by image. The metrics rely on this order to
    join and group without sorting again.
    """

    n: int
    n_images: int
    n_grams: int
    sentence: np.ndarray  # int64 sentence index (for a candidate, also its image index)
    gram: np.ndarray  # int64 n-gram id, 0 <= gram < n_grams
    order: np.ndarray  # int8 n-gram length minus one, 0 <= order < n
    count: np.ndarray  # int64 occurrences of the n-gram in the sentence (>= 1)
    ref_image: np.ndarray  # image index of each reference sentence (``TokenCorpus.ref_image``)

    @cached_property
    def order_starts(self) -> np.ndarray:
        """The rows of order ``k`` (length ``k + 1``) are ``order_starts[k]:order_starts[k + 1]``."""
        return np.searchsorted(self.order, np.arange(self.n + 1), side="left")

    @cached_property
    def is_candidate(self) -> np.ndarray:
        return self.sentence < self.n_images

    @cached_property
    def reference_groups(self) -> ReferenceGroups:
        """The reference rows grouped by (gram, image): one group per n-gram per image."""
        rows = np.flatnonzero(~self.is_candidate)
        key = self.gram[rows] * self.n_images + self.ref_image[self.sentence[rows] - self.n_images]
        first = np.ones(len(key), dtype=bool)
        first[1:] = key[1:] != key[:-1]
        starts = np.flatnonzero(first)
        max_count = np.maximum.reduceat(self.count[rows], starts) if len(rows) else self.count[rows]
        return ReferenceGroups(
            rows=rows, starts=np.append(starts, len(rows)), key=key[starts], max_count=max_count
        )

    @cached_property
    def candidate_matches(self) -> tuple[np.ndarray, np.ndarray]:
        """``(candidate_row, group)``: each candidate row whose n-gram occurs in a reference of its
        image, with the index of that (gram, image) reference group."""
        cand_rows = np.flatnonzero(self.is_candidate)
        groups = self.reference_groups
        if not len(groups.key):
            return cand_rows[:0], cand_rows[:0]
        cand_key = self.gram[cand_rows] * self.n_images + self.sentence[cand_rows]
        group = np.searchsorted(groups.key, cand_key)
        group[group == len(groups.key)] = 0
        found = groups.key[group] == cand_key
        return cand_rows[found], group[found]


class ReferenceGroups(NamedTuple):
    """Reference rows of :class:`NgramCounts` grouped by (gram, image), groups sorted by ``key``.

    Group ``j`` is ``rows[starts[j]:starts[j + 1]]`` (row indices), ``key[j] = gram * n_images + image``
    and ``max_count[j]`` the largest count of the n-gram in one reference of the image. The number of
    groups of an n-gram is its document frequency.
    """

    rows: np.ndarray
    starts: np.ndarray
    key: np.ndarray
    max_count: np.ndarray


@dataclass(eq=False)
class TokenCorpus:
    """Candidates and references of one evaluation, interned as integer token ids.

    Sentence ``i < n_images`` is the candidate of image ``i`` (images in the order of ``keys``); the
    references of image ``i`` are sentences ``n_images + ref_starts[i]`` up to
    ``n_images + ref_starts[i + 1]``. ``tokens[starts[s]:starts[s + 1]]`` are the ids of sentence ``s``.
    """

    keys: tuple[Hashable, ...]
    tokens: np.ndarray
    starts: np.ndarray
    ref_starts: np.ndarray
    vocabulary: dict[str, int]
    _ngrams: dict[int, NgramCounts] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        candidates: Mapping[Hashable, Sequence[str]],
        references: Mapping[Hashable, Sequence[Sequence[str]]],
    ) -> TokenCorpus:
        """Intern ``candidates`` (key -> tokens) and their ``references`` (key -> list of token lists).

        Only the references of candidate keys are used (extra reference keys are ignored, as the COCO
        tooling evaluates the images of the results file). Raises ``ValueError`` for an empty
        candidate set or for candidate keys without any reference, and ``TypeError`` when a caption is
        a string instead of a token list.
        """
        check_references(candidates, references)
        keys = tuple(candidates)
        sentences: list[Sequence[str]] = [candidates[key] for key in keys]
        ref_counts = []
        for key in keys:
            refs = references[key]
            if isinstance(refs, str):
                raise TypeError(f"references of {key!r} must be a list of token lists, not a string")
            sentences.extend(refs)
            ref_counts.append(len(refs))
        for position, sentence in enumerate(sentences):
            if isinstance(sentence, str):
                what = "candidate" if position < len(keys) else "a reference"
                raise TypeError(f"{what} caption is a string, expected a list of tokens: {sentence[:60]!r}")

        flat = list(chain.from_iterable(sentences))
        vocabulary = {token: index for index, token in enumerate(dict.fromkeys(flat))}
        tokens = np.fromiter(map(vocabulary.__getitem__, flat), dtype=np.int64, count=len(flat))
        starts = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences)), out=starts[1:])
        ref_starts = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.asarray(ref_counts, dtype=np.int64), out=ref_starts[1:])
        return cls(keys=keys, tokens=tokens, starts=starts, ref_starts=ref_starts, vocabulary=vocabulary)

    @classmethod
    def from_ids(
        cls,
        keys: Sequence[Hashable],
        tokens: np.ndarray,
        starts: np.ndarray,
        ref_starts: np.ndarray,
        vocabulary: dict[str, int],
    ) -> TokenCorpus:
        """A corpus from token ids already interned elsewhere (e.g. ``ptb.tokenize_many_ids``).

        The n-gram numbering (and CIDEr's df look-up by n-gram) needs every vocabulary entry to be
        used and the ids to be ``0..len(vocabulary) - 1``, so entries no sentence uses are dropped
        and the ids renumbered, in their order. ``ref_starts[i]`` is the first reference of image
        ``i`` among the references, as in the class docstring.
        """
        used = np.bincount(tokens, minlength=len(vocabulary)) > 0
        if not used.all():
            new_id = np.cumsum(used) - 1
            tokens = new_id[tokens]
            ordered = sorted(vocabulary.items(), key=lambda item: item[1])
            vocabulary = {word: int(new_id[old]) for word, old in ordered if used[old]}
        return cls(
            keys=tuple(keys), tokens=tokens, starts=starts, ref_starts=ref_starts, vocabulary=vocabulary
        )

    @property
    def n_images(self) -> int:
        return len(self.keys)

    @property
    def n_sentences(self) -> int:
        return len(self.starts) - 1

    @property
    def n_references(self) -> int:
        return self.n_sentences - self.n_images

    @cached_property
    def lengths(self) -> np.ndarray:
        """Token count of every sentence (candidates first)."""
        return np.diff(self.starts)

    @cached_property
    def ref_image(self) -> np.ndarray:
        """Image index of every reference sentence."""
        return np.repeat(np.arange(self.n_images, dtype=np.int64), np.diff(self.ref_starts))

    def ngrams(self, n: int = 4) -> NgramCounts:
        """Per-sentence counts of all 1..n-grams (computed once per ``n``)."""
        if n not in self._ngrams:
            rows = _count_ngrams(self.tokens, self.starts, len(self.vocabulary), n)
            self._ngrams[n] = NgramCounts(
                n=n,
                n_images=self.n_images,
                n_grams=rows.n_grams,
                sentence=rows.sentence,
                gram=rows.gram,
                order=rows.order,
                count=rows.count,
                ref_image=self.ref_image,
            )
        return self._ngrams[n]


def _count_ngrams(tokens: np.ndarray, starts: np.ndarray, vocab_size: int, n: int) -> _Rows:
    """Per-sentence n-gram counts, one sort per order.

    The k-gram starting at a position is (its (k-1)-gram id, next token); sorting these keys, ties
    broken by position, both numbers the distinct k-grams densely and lists each one's occurrences
    by position, hence by sentence, so runs of equal (gram, sentence) are the per-sentence counts.
    The position rides in the low bits of one int64, which makes every key distinct (so an unstable
    sort gives the same order) and means no permutation needs applying (with a stable
    argsort as the fallback when the bits do not fit). Unigrams of a vocabulary below 2**16 use
    numpy's linear-time radix sort.
    """
    if n < 1:
        raise ValueError("n-gram order must be at least 1")
    total = len(tokens)
    n_sentences = len(starts) - 1
    sentence_of = np.repeat(np.arange(n_sentences, dtype=np.int64), np.diff(starts))
    # Small dtypes for the arrays gathered at random positions: they stay in cache.
    fits_up_to = np.minimum(starts[1:][sentence_of] - np.arange(total), n).astype(
        np.uint8 if n < 256 else np.int64
    )
    small_tokens = tokens.astype(np.int32) if vocab_size < 2**31 else tokens
    sentence_of = sentence_of.astype(np.int32) if n_sentences < 2**31 else sentence_of
    position_bits = max(total.bit_length(), 1)
    position_mask = (1 << position_bits) - 1
    position = np.arange(total, dtype=np.int64)  # start of each k-gram that fits in its sentence
    gram = tokens  # dense id of the k-gram starting at ``position``
    # Output columns sized for the worst case (no n-gram repeated within a sentence), filled in place.
    capacity = int(fits_up_to.sum(dtype=np.int64))  # k-grams starting at each position
    out_sentence = np.empty(capacity, dtype=np.int64)
    out_gram = np.empty(capacity, dtype=np.int64)
    out_count = np.empty(capacity, dtype=np.int64)
    per_order = np.zeros(n, dtype=np.int64)
    filled = offset = 0
    for k in range(1, n + 1):
        if k == 1:
            key = tokens
        else:
            fits = fits_up_to[position] >= k
            position = position[fits]
            key = gram[fits] * vocab_size + small_tokens[position + (k - 1)]
        if not len(key):
            break
        if k == 1 and vocab_size <= 2**16:  # small vocabulary: a linear-time stable radix sort
            ordering = np.argsort(key.astype(np.uint16), kind="stable")
            sorted_key, position = key[ordering], ordering
        elif int(key.max()).bit_length() + position_bits <= 62:
            combined = (key << position_bits) | position
            # The position in the low bits makes every value distinct, so any sort gives the order a
            # stable one would; numpy's default (introsort, vectorised with x86-simd-sort where the CPU
            # has AVX2/AVX-512) took half the time of timsort here (0.51 s vs 0.97 s for all orders at
            # 50,000 images), although the rows arrive in runs sorted by their (k-1)-gram.
            combined.sort()
            sorted_key = combined >> position_bits
            position = combined & position_mask
        else:
            ordering = np.argsort(key, kind="stable")
            sorted_key, position = key[ordering], position[ordering]
        new_gram = np.empty(len(key), dtype=bool)
        new_gram[0] = True
        np.not_equal(sorted_key[1:], sorted_key[:-1], out=new_gram[1:])
        gram = np.cumsum(new_gram) - 1  # aligned with the sorted ``position`` from now on
        sentence = sentence_of[position]
        new_row = new_gram
        new_row[1:] |= sentence[1:] != sentence[:-1]
        row = np.flatnonzero(new_row)
        end = filled + len(row)
        out_sentence[filled:end] = sentence[row]
        np.add(gram[row], offset, out=out_gram[filled:end])
        np.subtract(row[1:], row[:-1], out=out_count[filled : end - 1])
        out_count[end - 1] = len(key) - row[-1]
        per_order[k - 1] = len(row)
        filled = end
        offset += int(gram[-1]) + 1
    order = np.repeat(np.arange(n, dtype=np.int8), per_order)
    return _Rows(out_sentence[:filled], out_gram[:filled], order, out_count[:filled], offset)


class _Rows(NamedTuple):
    sentence: np.ndarray
    gram: np.ndarray
    order: np.ndarray
    count: np.ndarray
    n_grams: int
