"""Caption preprocessing: normalisation, per-language tokenisation, and token interning.

The COCO evaluation server (paper 002, sec. 3.1) lowercases captions, tokenises them with the PTB
tokenizer and drops punctuation; the XM3600 paper (000, footnote 9) does the same ("remove punctuation
and lowercase") in 36 languages. The PTB tokenizer is English-only and needs Java, so this module does
the multilingual equivalent in pure Python:

``normalise(text)``
    1. Unicode NFC, so a decomposed "e + U+0301" and a precomposed "é" are the same token.
    2. ``str.lower()``, the lowercasing the COCO tooling uses (not ``casefold()``: casefold would also
       turn German "ß" into "ss" and Greek final sigma into "σ", which the references do not do).
       A second NFC pass follows, because lowercasing can produce decomposed sequences (Turkish "İ").
    3. Every Unicode *punctuation* character (general category P*: ``. , ? ! ' " - ( ) « » ¿ ¡ ، 。
       ， 、 「 」 “ ”`` ...) is replaced by a space. Replacing rather than deleting keeps the words on
       either side apart ("black-and-white" -> "black and white", French "l'homme" -> "l homme"),
       which matters more in the 30-odd space-separated languages than the occasional split of an
       English possessive ("dog's" -> "dog s"); the PTB tokenizer splits those too.
       *Symbols* (category S*: ``$ + ° © ™``, emoji) are kept: they carry meaning and PTB keeps them.
       Combining marks (M*), needed by Devanagari, Thai and others, are kept.
    4. Runs of whitespace collapse to one space, and the ends are stripped.

``tokenize(text, tokenizer)``
    ``"whitespace"`` splits on whitespace. ``"character"`` is for scripts written without spaces
    between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese, Tibetan): with whitespace splitting,
    a whole Chinese or Thai caption is ONE token, so every n-gram statistic degenerates to "identical
    sentence or not" and BLEU/ROUGE/CIDEr become meaningless. The character tokenizer makes each
    character a token (a base character together with the combining marks that follow it, so a Thai
    consonant keeps its vowel and tone marks), except that runs of Latin letters and digits stay one
    token each ("iPhone 12台" -> ``["iphone", "12", "台"]``), so embedded English words and numbers are
    compared as words. Spaces only separate tokens. Word segmenters (jieba, MeCab, PyThaiNLP) would
    give word tokens, but they are language-specific dependencies whose output changes between
    versions; characters are the reproducible choice, as CIDEr for Chinese is commonly computed.

A language's tokenizer is a setting of the language; :func:`default_tokenizer` gives the default.

``TokenCorpus`` is the last step, shared by all metrics: it interns tokens into integer ids and
builds n-gram count tables with numpy, so the metrics never touch strings again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain

import numpy as np

__all__ = [
    "CHARACTER_TOKENIZED_LANGUAGES",
    "TOKENIZERS",
    "NgramCounts",
    "TokenCorpus",
    "default_tokenizer",
    "normalise",
    "tokenize",
    "tokens_for",
]

# Planes that hold every punctuation character, combining mark and Latin letter (Unicode 14-16):
# the BMP, the SMP, and plane 14 (variation selectors). Planes 2-3 hold only CJK ideographs.
_SCANNED_RANGES = (range(0x0000, 0x20000), range(0xE0000, 0xE1000))


@dataclass(frozen=True)
class _UnicodeTables:
    punctuation_to_space: dict[int, str]
    character_token: re.Pattern[str]


def _class_from(codepoints: list[int]) -> str:
    """A regex character class body for the given sorted code points, as ranges."""
    parts = []
    start = prev = codepoints[0]
    for cp in chain(codepoints[1:], [-2]):
        if cp == prev + 1:
            prev = cp
            continue
        parts.append(re.escape(chr(start)) if start == prev else f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
        start = prev = cp
    return "".join(parts)


@cache
def _tables() -> _UnicodeTables:
    """Built on first use (one scan of ~135k code points, ~60 ms) rather than at import."""
    punctuation: dict[int, str] = {}
    marks: list[int] = []
    latin: list[int] = []
    category, name = unicodedata.category, unicodedata.name
    for cp in chain(*_SCANNED_RANGES):
        ch = chr(cp)
        cat = category(ch)
        if cat[0] == "P":
            punctuation[cp] = " "
        elif cat[0] == "M":
            marks.append(cp)
        elif cat[0] == "L" and name(ch, "").startswith(("LATIN ", "FULLWIDTH LATIN ")):
            latin.append(cp)
    mark_class = _class_from(marks)
    word_class = _class_from(latin) + r"\d"  # \d: any decimal digit (Nd), also Thai or fullwidth digits
    pattern = re.compile(f"[{word_class}](?:[{word_class}{mark_class}])*|\\S[{mark_class}]*")
    return _UnicodeTables(punctuation_to_space=punctuation, character_token=pattern)


def normalise(text: str) -> str:
    """NFC, lowercase, punctuation to spaces, whitespace collapsed (see the module docstring)."""
    text = unicodedata.normalize("NFC", text).lower()
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.translate(_tables().punctuation_to_space).split())


def _whitespace_tokens(text: str) -> list[str]:
    return text.split()


def _character_tokens(text: str) -> list[str]:
    return _tables().character_token.findall(text)


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "whitespace": _whitespace_tokens,
    "character": _character_tokens,
}

# ISO 639 codes of languages whose script does not separate words with spaces.
# "yue" (written Cantonese) is added to the brief's list for the same reason as "zh".
CHARACTER_TOKENIZED_LANGUAGES = frozenset({"zh", "yue", "ja", "th", "lo", "km", "my", "bo"})


def default_tokenizer(language_code: str) -> str:
    """The default tokenizer name for a BCP 47 / POSIX language code.

    Only the primary subtag counts, case-insensitively: "zh", "zh-Hans", "zh_CN", "ZH-hant-TW" all
    give "character"; anything not in :data:`CHARACTER_TOKENIZED_LANGUAGES` gives "whitespace".
    """
    primary = language_code.strip().replace("_", "-").split("-", 1)[0].lower()
    return "character" if primary in CHARACTER_TOKENIZED_LANGUAGES else "whitespace"


def tokenize(text: str, tokenizer: str) -> list[str]:
    """Split already-normalised text with the named tokenizer (a key of :data:`TOKENIZERS`)."""
    try:
        split = TOKENIZERS[tokenizer]
    except KeyError:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; choose one of {sorted(TOKENIZERS)}") from None
    return split(text)


def tokens_for(text: str, tokenizer: str) -> list[str]:
    """``tokenize(normalise(text), tokenizer)``: the tokens the metrics see for a raw caption."""
    return tokenize(normalise(text), tokenizer)


# --------------------------------------------------------------------------------------------------
# Interning: the shared numeric representation of one evaluation (candidates + their references).


@dataclass(frozen=True, eq=False)
class NgramCounts:
    """Per-sentence n-gram counts of a :class:`TokenCorpus`, one row per distinct (sentence, n-gram).

    ``gram`` ids are global: n-grams of different lengths never share an id, and the same n-gram has
    the same id in every sentence. Rows are grouped by order, then sorted by (sentence, gram).
    """

    n: int
    sentence: np.ndarray  # int64 sentence index
    gram: np.ndarray  # int64 n-gram id, 0 <= gram < n_grams
    order: np.ndarray  # int64 n-gram length minus one, 0 <= order < n
    count: np.ndarray  # int64 occurrences of the n-gram in the sentence (>= 1)
    n_grams: int


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
        if not candidates:
            raise ValueError("no candidate captions to score")
        keys = tuple(candidates)
        missing = [key for key in keys if not references.get(key)]
        if missing:
            shown = ", ".join(repr(key) for key in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            raise ValueError(f"{len(missing)} candidate(s) have no reference caption: {shown}{more}")
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

    @property
    def n_images(self) -> int:
        return len(self.keys)

    @property
    def n_sentences(self) -> int:
        return len(self.starts) - 1

    @property
    def n_references(self) -> int:
        return self.n_sentences - self.n_images

    @property
    def lengths(self) -> np.ndarray:
        """Token count of every sentence (candidates first)."""
        return np.diff(self.starts)

    @property
    def ref_image(self) -> np.ndarray:
        """Image index of every reference sentence."""
        return np.repeat(np.arange(self.n_images, dtype=np.int64), np.diff(self.ref_starts))

    def ngrams(self, n: int = 4) -> NgramCounts:
        """Per-sentence counts of all 1..n-grams (computed once per ``n``)."""
        if n not in self._ngrams:
            self._ngrams[n] = _count_ngrams(self.tokens, self.starts, len(self.vocabulary), n)
        return self._ngrams[n]


def _count_ngrams(tokens: np.ndarray, starts: np.ndarray, vocab_size: int, n: int) -> NgramCounts:
    if n < 1:
        raise ValueError("n-gram order must be at least 1")
    n_sentences = len(starts) - 1
    sentence_of = np.repeat(np.arange(n_sentences, dtype=np.int64), np.diff(starts))
    ends = starts[1:][sentence_of]  # end offset of the sentence each token is in
    position = np.arange(len(tokens), dtype=np.int64)  # start of each k-gram still fitting its sentence
    gram = tokens  # id of the k-gram starting at ``position``, 0 <= gram < n_k
    n_k = max(vocab_size, 1)
    offset = 0
    parts: list[tuple[np.ndarray, ...]] = []
    for k in range(1, n + 1):
        if k > 1:
            fits = position + (k - 1) < ends[position]
            position = position[fits]
            # k-gram = (k-1)-gram followed by one token; renumber densely so ids stay small.
            extended = gram[fits] * vocab_size + tokens[position + (k - 1)]
            unique, gram = np.unique(extended, return_inverse=True)
            n_k = max(len(unique), 1)
        pairs, counts = np.unique(sentence_of[position] * n_k + gram, return_counts=True)
        parts.append((pairs // n_k, pairs % n_k + offset, np.full(len(pairs), k - 1, dtype=np.int64), counts))
        offset += n_k
    sentence, gram_id, order, count = (np.concatenate(column) for column in zip(*parts))
    return NgramCounts(
        n=n, sentence=sentence, gram=gram_id, order=order, count=count.astype(np.int64), n_grams=offset
    )
