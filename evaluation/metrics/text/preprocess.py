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
    "Matches",
    "NgramCounts",
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
    order), and an n-gram has the same id in every sentence. Rows are sorted by n-gram, then image,
    and within one (n-gram, image) *group* the candidate's row comes first (when the candidate has
    the n-gram) and the references' rows follow in their order; ``group_starts`` holds the first row
    of each group and, last, the number of rows. So a candidate row and the reference rows it is
    compared with are neighbours: the metrics join them and count document frequencies without
    searching or sorting again.
    """

    n: int
    n_images: int
    n_grams: int
    # Values are int32 (int64 past 2**31 tokens, sentences or vocabulary):
    sentence: np.ndarray  # sentence index (for a candidate, also its image index)
    gram: np.ndarray  # n-gram id, 0 <= gram < n_grams
    order: np.ndarray  # int8 n-gram length minus one, 0 <= order < n
    count: np.ndarray  # occurrences of the n-gram in the sentence (>= 1; uint8 or uint16 when that holds)
    group_starts: np.ndarray  # int64 first row of each (gram, image) group, then len(rows)

    @cached_property
    def order_starts(self) -> np.ndarray:
        """The rows of order ``k`` (length ``k + 1``) are ``order_starts[k]:order_starts[k + 1]``."""
        return np.searchsorted(self.order, np.arange(self.n + 1), side="left")

    @cached_property
    def is_candidate(self) -> np.ndarray:
        return self.sentence < self.n_images

    @cached_property
    def group_has_candidate(self) -> np.ndarray:
        """Whether each (gram, image) group starts with the candidate's row."""
        return self.sentence[self.group_starts[:-1]] < self.n_images

    @cached_property
    def group_sizes(self) -> np.ndarray:
        """Rows in each (gram, image) group (at most one per sentence of the image)."""
        return np.subtract(self.group_starts[1:], self.group_starts[:-1], dtype=self.sentence.dtype)

    def document_frequency(self) -> np.ndarray:
        """Per n-gram id, the number of images with a reference that contains it (CIDEr's df)."""
        first = self.group_starts[:-1]
        with_reference = self.group_sizes > self.group_has_candidate
        return np.bincount(self.gram[first[with_reference]], minlength=self.n_grams)

    @cached_property
    def matches(self) -> Matches:
        """Each candidate row whose n-gram is in a reference of the same image, with those rows."""
        size = self.group_sizes
        matched = np.flatnonzero(self.group_has_candidate & (size > 1))
        candidate_rows = self.group_starts[matched]
        n_references = size[matched] - 1
        ends = np.cumsum(n_references)
        # The reference rows follow their candidate's row: row c + 1 ... c + n_references.
        reference_rows = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
        reference_rows += np.repeat(candidate_rows + 1 - (ends - n_references), n_references)
        return Matches(
            candidate_rows=candidate_rows, n_references=n_references, reference_rows=reference_rows
        )


class Matches(NamedTuple):
    """Candidate rows of :class:`NgramCounts` that meet reference rows of the same n-gram and image.

    ``reference_rows`` lists, candidate row after candidate row, the ``n_references[j]`` reference
    rows of ``candidate_rows[j]``'s group (at most one per reference, in their order).
    """

    candidate_rows: np.ndarray
    n_references: np.ndarray
    reference_rows: np.ndarray


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
            # Counted with the sentences laid out image by image (each candidate, then its
            # references), which puts the rows of an n-gram in the order NgramCounts promises.
            sentence_ids, tokens, starts = self._image_by_image()
            rows = _count_ngrams(
                tokens, starts, len(self.vocabulary), n, sentence_ids=sentence_ids, image_of=self.image_of
            )
            self._ngrams[n] = NgramCounts(
                n=n,
                n_images=self.n_images,
                n_grams=rows.n_grams,
                sentence=rows.sentence,
                gram=rows.gram,
                order=rows.order,
                count=rows.count,
                group_starts=rows.group_starts,
            )
        return self._ngrams[n]

    @cached_property
    def image_of(self) -> np.ndarray:
        """Image index of every sentence (candidates first)."""
        return np.concatenate([np.arange(self.n_images, dtype=np.int64), self.ref_image])

    def _image_by_image(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(sentence_ids, tokens, starts)``: the sentences reordered image by image, the candidate
        of each image then its references; ``sentence_ids[i]`` is the corpus index of sentence ``i``."""
        n_sentences = self.n_sentences
        sentence_ids = np.empty(n_sentences, dtype=np.int64)
        # Image i's candidate goes after the sentences of the images before it: i candidates and
        # ref_starts[i] references; reference j goes after its candidate and the j - ref_starts[i]
        # references of its image before it.
        sentence_ids[np.arange(self.n_images) + self.ref_starts[:-1]] = np.arange(self.n_images)
        sentence_ids[np.arange(self.n_references) + self.ref_image + 1] = np.arange(
            self.n_images, n_sentences
        )
        lengths = self.lengths[sentence_ids]
        ends = np.cumsum(lengths)
        starts = np.zeros(n_sentences + 1, dtype=np.int64)
        starts[1:] = ends
        # Token positions in the new order: each sentence's run of positions, one after the other.
        positions = np.arange(int(starts[-1]), dtype=np.int64)
        positions += np.repeat(self.starts[:-1][sentence_ids] - starts[:-1], lengths)
        return sentence_ids, self.tokens[positions], starts


def _count_ngrams(
    tokens: np.ndarray,
    starts: np.ndarray,
    vocab_size: int,
    n: int,
    *,
    sentence_ids: np.ndarray | None = None,
    image_of: np.ndarray | None = None,
) -> _Rows:
    """Per-sentence n-gram counts, one sort per order.

    The k-gram starting at a position is (its (k-1)-gram id, next token); sorting these keys, ties
    broken by position, both numbers the distinct k-grams densely and lists each one's occurrences
    by position, hence by sentence, so runs of equal (gram, sentence) are the per-sentence counts.
    The position rides in the low bits of one int64, which makes every key distinct (so an unstable
    sort gives the same order) and means no permutation needs applying (with a stable
    argsort as the fallback when the bits do not fit). Unigrams of a vocabulary below 2**16 use
    numpy's linear-time radix sort.

    Rows name sentence ``i`` (``tokens[starts[i]:starts[i + 1]]``) ``sentence_ids[i]`` (default ``i``);
    ``image_of[sentence id]`` (default: the sentence id) groups them: ``group_starts`` are the rows
    where the n-gram or the image changes. Rows come sorted by (gram, position of the sentence).
    Values (sentence, gram, count) are int32 unless the corpus is too large for them; positions
    and row numbers, which index arrays, stay int64 (numpy would convert narrower indices).
    """
    if n < 1:
        raise ValueError("n-gram order must be at least 1")
    total = len(tokens)
    n_sentences = len(starts) - 1
    lengths = np.diff(starts)
    # Half the memory traffic of int64 for the columns, which is most of the time here.
    value_type = np.int32 if max(total, n_sentences, vocab_size) < 2**31 else np.int64
    ids = np.arange(n_sentences) if sentence_ids is None else sentence_ids
    sentence_of = np.repeat(ids.astype(value_type), lengths)
    image_of = None if image_of is None else image_of.astype(value_type)
    # How many tokens a k-gram starting at each position can have: n, except near a sentence's end.
    fits_up_to = np.full(total, n, dtype=np.uint8 if n < 256 else np.int64)
    for remaining in range(min(n - 1, int(lengths.max(initial=0))), 0, -1):
        fits_up_to[starts[1:][lengths >= remaining] - remaining] = remaining
    small_tokens = tokens.astype(value_type)
    position_bits = max(total.bit_length(), 1)
    position_mask = (1 << position_bits) - 1
    # The start of each k-gram that fits in its sentence and its dense id, in the order of the last
    # sort (set by the first).
    position = gram = small_tokens
    # Output columns sized for the worst case (no n-gram repeated within a sentence), filled in place.
    capacity = int(fits_up_to.sum(dtype=np.int64))  # k-grams starting at each position
    # (Pages of the capacity that no row reaches are never touched, so they cost nothing.)
    out_sentence = np.empty(capacity, dtype=value_type)
    out_gram = np.empty(capacity, dtype=value_type)
    # A count is at most the sentence's length.
    longest = int(lengths.max(initial=0))
    out_count = np.empty(
        capacity, dtype=np.uint8 if longest < 2**8 else np.uint16 if longest < 2**16 else value_type
    )
    group_starts = np.empty(capacity + 1, dtype=np.int64)
    n_groups = 0
    per_order = np.zeros(n, dtype=np.int64)
    filled = offset = 0
    for k in range(1, n + 1):
        if k == 1:
            key = tokens
        else:
            fits = np.take(fits_up_to, position) >= k
            position = position[fits]
            key = np.multiply(gram[fits], vocab_size, dtype=np.int64)
            key += np.take(small_tokens[k - 1 :], position)  # the k-th token of each k-gram
        if not len(key):
            break
        if k == 1 and vocab_size <= 2**16:  # small vocabulary: a linear-time stable radix sort
            ordering = np.argsort(key.astype(np.uint16), kind="stable")
            sorted_key, position = key[ordering], ordering
        elif int(key.max()).bit_length() + position_bits <= 62:
            if k == 1:
                combined, position = key.astype(np.int64), np.arange(total, dtype=np.int64)
            else:
                combined = key  # in place: these arrays are the largest here, and fresh memory is costly
            combined <<= position_bits
            combined |= position
            # The position in the low bits makes every value distinct, so any sort gives the order a
            # stable one would; numpy's default (introsort, vectorised with x86-simd-sort where the CPU
            # has AVX2/AVX-512) took half the time of timsort here (0.51 s vs 0.97 s for all orders at
            # 50,000 images), although the rows arrive in runs sorted by their (k-1)-gram.
            combined.sort()
            sorted_key = np.right_shift(combined, position_bits, out=position)
            position = np.bitwise_and(combined, position_mask, out=combined)
        else:
            ordering = np.argsort(key, kind="stable")
            sorted_key, position = key[ordering], ordering if k == 1 else position[ordering]
        new_row = np.empty(len(key), dtype=bool)
        new_row[0] = False  # so that the running count of n-gram changes is the 0-based id
        np.not_equal(sorted_key[1:], sorted_key[:-1], out=new_row[1:])
        gram = np.cumsum(new_row, dtype=value_type)  # aligned with the sorted ``position`` from now on
        new_row[0] = True
        sentence = np.take(sentence_of, position)
        new_row[1:] |= sentence[1:] != sentence[:-1]
        row = np.flatnonzero(new_row)
        end = filled + len(row)
        # (mode="clip": with ``out``, numpy's default mode writes through a temporary copy)
        row_sentence = np.take(sentence, row, out=out_sentence[filled:end], mode="clip")
        row_gram = np.take(gram, row, out=out_gram[filled:end], mode="clip")
        np.subtract(row[1:], row[:-1], out=out_count[filled : end - 1], casting="unsafe")  # they fit
        out_count[end - 1] = len(key) - row[-1]
        # A group starts where the n-gram or the image changes.
        row_image = row_sentence if image_of is None else np.take(image_of, row_sentence)
        first = np.empty(len(row), dtype=bool)
        first[0] = True
        np.not_equal(row_gram[1:], row_gram[:-1], out=first[1:])
        first[1:] |= row_image[1:] != row_image[:-1]
        starts_here = np.flatnonzero(first)
        np.add(starts_here, filled, out=group_starts[n_groups : n_groups + len(starts_here)])
        n_groups += len(starts_here)
        row_gram += offset  # ids grow with the order
        per_order[k - 1] = len(row)
        filled = end
        offset += int(gram[-1]) + 1
    order = np.repeat(np.arange(n, dtype=np.int8), per_order)
    group_starts[n_groups] = filled
    return _Rows(
        out_sentence[:filled],
        out_gram[:filled],
        order,
        out_count[:filled],
        offset,
        group_starts[: n_groups + 1],
    )


class _Rows(NamedTuple):
    sentence: np.ndarray
    gram: np.ndarray
    order: np.ndarray
    count: np.ndarray
    n_grams: int
    group_starts: np.ndarray
