"""Names of the tokenisation schemes and each language's default: plain data, shared by both apps.

A language's scheme is a setting of the language (``annotation.models.Language.tokenizer``), and the
metrics (``evaluation.metrics.text.schemes``) implement each name. ``annotation`` must not import
``evaluation``, so the names and the default rule live here, where both can see them; a test checks
that the registry of ``evaluation.metrics.text.schemes`` implements exactly these names.
"""

from __future__ import annotations

__all__ = [
    "CHAR",
    "COCO_PTB",
    "JIEBA",
    "MECAB",
    "NEWMM",
    "SCHEME_LABELS",
    "SCHEME_NAMES",
    "SEGMENTING_SCHEMES",
    "WHITESPACE",
    "WRITTEN_WITHOUT_SPACES",
    "XM3600_PTB",
    "counts_characters",
    "default_scheme_name",
    "primary_subtag",
]

WHITESPACE = "whitespace"
CHAR = "char"
COCO_PTB = "coco-ptb"
XM3600_PTB = "xm3600-ptb"
JIEBA = "jieba"
MECAB = "mecab"
NEWMM = "newmm"

# name -> label shown in forms and the admin.
SCHEME_LABELS: dict[str, str] = {
    WHITESPACE: "whitespace (Unicode punctuation removed, split on spaces)",
    CHAR: "char (one token per grapheme cluster)",
    COCO_PTB: "coco-ptb (COCO server's PTB tokenisation; English)",
    XM3600_PTB: "xm3600-ptb (PTB tokenisation on any language, as big_vision's XM3600 evaluator)",
    JIEBA: "jieba (Chinese word segmenter)",
    MECAB: "mecab (Japanese words: MeCab with UniDic-lite)",
    NEWMM: "newmm (Thai words: PyThaiNLP newmm)",
}
SCHEME_NAMES: tuple[str, ...] = tuple(SCHEME_LABELS)

# Schemes whose tokens are characters or dictionary words of a script written without spaces.
SEGMENTING_SCHEMES = frozenset({CHAR, JIEBA, MECAB, NEWMM})

# ISO 639 codes of languages whose script does not separate words with spaces. "yue" (written
# Cantonese) is there for the same reason as "zh".
WRITTEN_WITHOUT_SPACES = frozenset({"zh", "yue", "ja", "th", "lo", "km", "my", "bo"})


def primary_subtag(language_code: str) -> str:
    """The primary subtag of a BCP 47 / POSIX code, lowercased: "zh-Hant_TW" -> "zh"."""
    return language_code.strip().replace("_", "-").split("-", 1)[0].lower()


def default_scheme_name(language_code: str) -> str:
    """The default scheme of a language: ``coco-ptb`` for English, ``char`` for languages written
    without spaces, ``whitespace`` for every other language (docs/metrics.md, "Text preprocessing and tokenisation")."""
    primary = primary_subtag(language_code)
    if primary == "en":
        return COCO_PTB
    if primary in WRITTEN_WITHOUT_SPACES:
        return CHAR
    return WHITESPACE


def counts_characters(scheme_name: str, language_code: str) -> bool:
    """Whether a caption's length is counted in characters rather than words (the caption checks).

    True for the character scheme and the word segmenters, and for every language written without
    spaces whatever its scheme (a Chinese caption under ``xm3600-ptb`` is still written without spaces).
    """
    return scheme_name in SEGMENTING_SCHEMES or primary_subtag(language_code) in WRITTEN_WITHOUT_SPACES
