"""Caption statistics per language, the shape of Table 1 of seed 000 (sec. 2.4).

Per language: the number of captions, the number of images with 1, 2 and 3+ captions (the
"replication" columns), the mean number of words per caption and the mean number of characters.

* Words are the tokens of the language's tokenisation scheme, the ones the metrics see
  (:mod:`evaluation.metrics.text.schemes`: lowercased, punctuation removed, then split). By default
  the scheme is :func:`~evaluation.metrics.text.schemes.default_scheme` of the language code; pass
  the languages' own settings to override it. For languages tokenised per character (zh, ja, th, ...
  under ``char``) a "word" is therefore a grapheme cluster, so their mean words are NOT comparable
  with the paper's 1.0 (zh, ja) and 1.2 (th), which count whitespace-separated words.
* Characters are the Unicode code points of the raw caption after NFC normalisation (so "é" typed as
  e + combining accent counts once) and stripping of leading/trailing whitespace; inner spaces and
  punctuation COUNT, since the paper's characters are most likely the raw caption length (its German
  captions have 11.2 words and 76.5 characters, about 6.8 per word: letters plus a space).
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from evaluation.metrics.text.schemes import scheme_for_language

__all__ = [
    "STATISTICS_COLUMNS",
    "CaptionStatsRow",
    "caption_characters",
    "caption_statistics",
    "default_tokenizer_for",
]

Tokenise = Callable[[str], list[str]]


@dataclass(frozen=True)
class CaptionStatsRow:
    """One language's row of Table 1. ``images_1 + images_2 + images_3_plus == n_images``."""

    language: str
    n_captions: int
    n_images: int
    images_1: int
    images_2: int
    images_3_plus: int
    mean_words: float
    mean_chars: float
    tokenizer: str | None  # the tokenisation scheme's name when known (None for a caller's own callable)


# Columns for :func:`evaluation.research.tables.format_table`: (attribute, header, number format).
STATISTICS_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("language", "Id", ""),
    ("n_captions", "captions", "d"),
    ("images_1", "1", "d"),
    ("images_2", "2", "d"),
    ("images_3_plus", "3+", "d"),
    ("mean_words", "words", ".1f"),
    ("mean_chars", "chars", ".1f"),
)


def caption_characters(text: str) -> int:
    """Characters of a caption as counted in Table 1 (see the module docstring)."""
    return len(unicodedata.normalize("NFC", text).strip())


def default_tokenizer_for(language: str) -> Tokenise:
    """The default tokenising function of a language: its default scheme's ``tokenize``."""
    return _scheme_tokenise(language, None)[0]


def _scheme_tokenise(language: str, name: str | None) -> tuple[Tokenise, str]:
    chosen = scheme_for_language(language, name)
    return partial(chosen.tokenize, language=language), chosen.name


def _resolve(
    tokenizer_for: Callable[[str], Tokenise] | Mapping[str, str] | None, language: str
) -> tuple[Tokenise, str | None]:
    if tokenizer_for is None:
        return _scheme_tokenise(language, None)
    if isinstance(tokenizer_for, Mapping):
        return _scheme_tokenise(language, tokenizer_for.get(language) or None)
    return tokenizer_for(language), None


def caption_statistics(
    captions: Iterable[tuple[str, Hashable, str] | Mapping[str, Any]],
    tokenizer_for: Callable[[str], Tokenise] | Mapping[str, str] | None = None,
) -> list[CaptionStatsRow]:
    """Table 1 rows, one per language (sorted by language), from captions ``(language, image_key,
    text)`` (tuples or mappings with those keys).

    ``tokenizer_for``: a function from a language code to a tokenising function (raw text -> tokens),
    or a mapping language code -> scheme name (``evaluation.metrics.text.schemes.SCHEMES``, e.g. the
    languages' ``tokenizer`` settings; languages not in it get their default), or None for the default
    of every language. Raises ``SchemeError`` (a ``ValueError`` naming the scheme and the language)
    for an unknown scheme, one for another language or one whose library is missing.
    """
    texts: dict[str, list[str]] = defaultdict(list)
    per_image: dict[str, Counter[Hashable]] = defaultdict(Counter)
    for record in captions:
        if isinstance(record, Mapping):
            language, image_key, text = record["language"], record["image_key"], record["text"]
        else:
            language, image_key, text = record
        texts[language].append(text)
        per_image[language][image_key] += 1

    rows = []
    for language in sorted(texts):
        tokenise, name = _resolve(tokenizer_for, language)
        language_texts = texts[language]
        replication = Counter(min(count, 3) for count in per_image[language].values())
        n = len(language_texts)
        rows.append(
            CaptionStatsRow(
                language=language,
                n_captions=n,
                n_images=len(per_image[language]),
                images_1=replication[1],
                images_2=replication[2],
                images_3_plus=replication[3],
                mean_words=sum(len(tokenise(text)) for text in language_texts) / n,
                mean_chars=sum(caption_characters(text) for text in language_texts) / n,
                tokenizer=name,
            )
        )
    return rows
