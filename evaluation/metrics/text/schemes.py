"""Named, versioned tokenisation schemes: how a raw caption becomes the tokens the metrics count.

A scheme is a small pure function with a name and a version; a language's scheme is a setting of
the language (``Language.tokenizer``, default :func:`default_scheme`), and a metric run or
``score_captions`` can override it. The names are defined in :mod:`core.tokenisation` (the language
setting's choices); this registry implements each of them.

``whitespace`` (version 1)
    The platform's own Unicode rule (:func:`.preprocess.normalise`: NFC, lowercase, every Unicode
    punctuation character to a space), then a split on whitespace. What every run before schemes used.
``char`` (version 2)
    The same normalisation, then one token per extended grapheme cluster (``regex``'s ``\\X``), so a
    Thai consonant keeps its vowel and tone marks and an emoji with a skin-tone modifier or a flag is
    one token. Zero-width spaces, joiners and other format characters standing alone and whitespace
    are never tokens. Runs of Latin letters and digits stay one token each ("iPhone 12台" ->
    ``["iphone", "12", "台"]``), so embedded English words and numbers are compared as words, as the
    old ``character`` tokenizer (version 1: code point + following marks) did.
``coco-ptb``, ``xm3600-ptb``
    The COCO server's tokenisation (Stanford PTBTokenizer ``-preserveLines -lowerCase``, then
    pycocoevalcap's punctuation tokens removed), implemented in :mod:`.ptb`. ``coco-ptb`` is for
    English; ``xm3600-ptb`` applies the same tokenizer to every language, which is what big_vision's
    XM3600 evaluator does, so CIDEr can be compared with published PaLI/PaliGemma XM3600 numbers.
``jieba``, ``mecab``, ``newmm``
    Dictionary word segmenters for Chinese (jieba, precise mode), Japanese (MeCab through fugashi
    with the frozen UniDic-lite dictionary) and Thai (PyThaiNLP ``newmm`` with its bundled word
    list), applied after the platform's normalisation. Their version names the library and
    dictionary versions, which change the tokens. Nothing is downloaded or written at run time.

Every error is a :class:`SchemeError` (a ``ValueError``) naming the scheme and, where known, the
language: an unknown name, a scheme for another language, a library that is not installed, or a
caption the segmenter rejects.

:func:`text_signature` gives the signature stored and shown with every text-metric number.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import metadata

from core.tokenisation import (
    CHAR,
    COCO_PTB,
    JIEBA,
    MECAB,
    NEWMM,
    SCHEME_NAMES,
    WHITESPACE,
    XM3600_PTB,
    default_scheme_name,
    primary_subtag,
)

from . import TEXT_METRICS_VERSION
from .preprocess import normalise

__all__ = [
    "LEGACY_NAMES",
    "PRETOKENIZED",
    "SCHEMES",
    "Scheme",
    "SchemeError",
    "SchemeNotForLanguage",
    "SchemeUnavailable",
    "TextRejected",
    "UnknownScheme",
    "default_scheme",
    "scheme",
    "scheme_for_language",
    "text_signature",
    "tokens_signature",
]

# The pseudo-scheme of captions that arrive tokenised (``score_captions --pretokenized``).
PRETOKENIZED = "pretokenized"


class SchemeError(ValueError):
    """A scheme cannot tokenise: the message names the scheme and, where known, the language."""


class UnknownScheme(SchemeError):
    pass


class SchemeNotForLanguage(SchemeError):
    pass


class SchemeUnavailable(SchemeError):
    """The scheme's library is not installed (or cannot be loaded) where the code runs."""


class TextRejected(SchemeError):
    """The segmenter raised on a caption."""


def _for_language(language: str | None) -> str:
    return f" for language “{language}”" if language else ""


@dataclass(frozen=True)
class Scheme:
    """One tokenisation scheme.

    ``split(text, lowercase)`` turns a raw caption into tokens; ``version_of()`` gives the version
    (for a library-backed scheme, read from what is installed, so it raises
    :class:`SchemeUnavailable` when the library is missing). ``languages`` are the primary subtags
    the scheme is for (None: any). ``punctuation`` names the punctuation rule in signatures:
    ``unicode`` (every Unicode P* character removed) or ``ptb`` (pycocoevalcap's list).
    ``lowercase`` is what the metrics use; ``split`` also supports ``lowercase=False`` (the cased
    column of the XM3600 export).
    """

    name: str
    summary: str
    punctuation: str
    split: Callable[[str, bool], list[str]]
    version_of: Callable[[], str]
    languages: frozenset[str] | None = None
    lowercase: bool = True

    def version(self, *, language: str | None = None) -> str:
        try:
            return self.version_of()
        except SchemeUnavailable as exc:
            raise SchemeUnavailable(f"{exc}{_for_language(language)}") from None

    def check_language(self, language: str) -> None:
        """Raise :class:`SchemeNotForLanguage` when the scheme is not meant for ``language``."""
        if self.languages is not None and primary_subtag(language) not in self.languages:
            others = ", ".join(sorted(self.languages))
            hint = " (xm3600-ptb applies PTB to any language)" if self.name == COCO_PTB else ""
            raise SchemeNotForLanguage(
                f"the tokenisation scheme “{self.name}” is for {others}, not for language “{language}”{hint}"
            )

    def tokenize(self, text: str, *, lowercase: bool | None = None, language: str | None = None) -> list[str]:
        """Tokens of one raw caption (lowercased unless ``lowercase=False``)."""
        lower = self.lowercase if lowercase is None else lowercase
        try:
            return self.split(text, lower)
        except SchemeError as exc:
            raise type(exc)(f"{exc}{_for_language(language)}") from None
        except Exception as exc:  # the segmenter's own error: name the caption, scheme and language
            raise TextRejected(
                f"the tokenisation scheme “{self.name}”{_for_language(language)} rejected the caption "
                f"{text[:60]!r}: {type(exc).__name__}: {exc}"
            ) from exc


# --- whitespace and char ------------------------------------------------------------------------


def _whitespace(text: str, lowercase: bool) -> list[str]:
    return normalise(text, lowercase=lowercase).split()


@cache
def _grapheme_patterns():
    import regex  # in requirements.txt; imported on first use so that importing this module stays cheap

    # A run of Latin letters and digits (with their marks) is one token; anything else is one
    # extended grapheme cluster.
    token = regex.compile(r"(?V1)(?:[[\p{Script=Latin}&&\p{L}]\p{Nd}]\p{M}*)+|\X")
    invisible = regex.compile(r"[\s\p{Cf}\p{Cc}]+")  # whitespace and format characters standing alone
    return token, invisible


def _char(text: str, lowercase: bool) -> list[str]:
    token, invisible = _grapheme_patterns()
    return [t for t in token.findall(normalise(text, lowercase=lowercase)) if not invisible.fullmatch(t)]


def _static(version: str) -> Callable[[], str]:
    # The Unicode data behind NFC, lowercasing and the punctuation category is Python's.
    return lambda: f"{version}+unicode-{unicodedata.unidata_version}"


def regex_unicode_version() -> str:
    """The Unicode version the ``regex`` package's grapheme clusters follow, as its package says ("This
    module supports Unicode 18.0.0."); "unknown" where it does not say."""
    try:
        text = metadata.metadata("regex").get_payload() or ""
    except metadata.PackageNotFoundError:
        return "unknown"
    found = re.search(r"supports Unicode (\d+(?:\.\d+)*)", text)
    return found.group(1) if found else "unknown"


def _char_version() -> str:
    """Grapheme clusters come from ``regex``, which follows its own (newer) Unicode rules than Python's
    data (Khmer conjuncts, Hindi): the signature names the library and the Unicode it implements, so a
    ``regex`` upgrade that moves a cluster boundary changes the signature with the scores."""
    return f"{_static('2')()}+regex-{metadata.version('regex')}-unicode-{regex_unicode_version()}"


# --- PTB (coco-ptb, xm3600-ptb) -----------------------------------------------------------------


def _ptb():
    try:
        from . import ptb
    except ImportError as exc:
        raise SchemeUnavailable(
            f"the PTB tokenizer (evaluation.metrics.text.ptb) is not available ({exc})"
        ) from None
    return ptb


def _ptb_split(text: str, lowercase: bool) -> list[str]:
    return _ptb().tokenize(text, lowercase=lowercase)


def _ptb_version() -> str:
    return str(_ptb().VERSION)


# --- Dictionary segmenters ----------------------------------------------------------------------


def _installed(scheme_name: str, *distributions: str) -> str:
    """``"name-version+..."`` of the distributions, or :class:`SchemeUnavailable` naming what is missing."""
    parts, missing = [], []
    for name in distributions:
        try:
            parts.append(f"{name}-{metadata.version(name)}")
        except metadata.PackageNotFoundError:
            missing.append(name)
    if missing:
        raise SchemeUnavailable(
            f"the tokenisation scheme “{scheme_name}” needs {', '.join(missing)}, which is not installed "
            f"(pip install -r requirements.txt)"
        )
    return "+".join(parts)


def _import(scheme_name: str, module: str, distribution: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SchemeUnavailable(
            f"the tokenisation scheme “{scheme_name}” needs {distribution}, which cannot be imported ({exc})"
        ) from None


@cache
def _jieba():
    jieba = _import(JIEBA, "jieba", "jieba")
    jieba.setLogLevel(60)  # its "Building prefix dict" lines are noise in workers' logs
    tokenizer = jieba.Tokenizer()
    # Build the prefix dictionary from the bundled dict.txt ourselves instead of jieba's initialise,
    # which writes a cache file into the temp directory: nothing is written at run time, and no
    # worker depends on a shared writable cache (about a second per process, once).
    tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(tokenizer.get_dict_file())
    tokenizer.initialized = True
    return tokenizer


def _segment(text: str, lowercase: bool, words: Callable[[str], list[str]]) -> list[str]:
    """Normalise, then segment each space-separated run (spaces are word boundaries already)."""
    tokens: list[str] = []
    for run in normalise(text, lowercase=lowercase).split():
        tokens.extend(t for t in (w.strip() for w in words(run)) if t)
    return tokens


def _jieba_split(text: str, lowercase: bool) -> list[str]:
    tokenizer = _jieba()
    return _segment(text, lowercase, lambda run: tokenizer.lcut(run, HMM=True))


@cache
def _mecab():
    fugashi = _import(MECAB, "fugashi", "fugashi")
    unidic_lite = _import(MECAB, "unidic_lite", "unidic-lite")
    # The dictionary is named explicitly: fugashi.Tagger() would prefer the full "unidic" package
    # when it happens to be installed, and the tokens would silently change.
    dicdir = unidic_lite.DICDIR
    return fugashi.GenericTagger(f'-Owakati -d "{dicdir}" -r "{os.path.join(dicdir, "mecabrc")}"')


def _mecab_split(text: str, lowercase: bool) -> list[str]:
    if "\x00" in text:  # MeCab reads C strings: it would silently drop everything after a NUL
        raise ValueError("MeCab cannot read a NUL character (U+0000)")
    tagger = _mecab()
    return _segment(text, lowercase, lambda run: tagger.parse(run).split())


@cache
def _newmm():
    # Read-only and offline: PyThaiNLP must neither create ~/pythainlp-data nor try to download a
    # corpus; newmm needs only the word list inside the wheel.
    os.environ.setdefault("PYTHAINLP_READ_ONLY", "1")
    os.environ.setdefault("PYTHAINLP_OFFLINE", "1")
    module = _import(NEWMM, "pythainlp.tokenize", "pythainlp")
    return module.word_tokenize


def _newmm_split(text: str, lowercase: bool) -> list[str]:
    word_tokenize = _newmm()
    return _segment(text, lowercase, lambda run: word_tokenize(run, engine="newmm", keep_whitespace=False))


# --- The registry -------------------------------------------------------------------------------


def _ptb_scheme(name: str, summary: str, languages: frozenset[str] | None = None) -> Scheme:
    """A scheme of the COCO server's PTB tokenisation, with pycocoevalcap's punctuation list."""
    return Scheme(
        name=name,
        summary=summary,
        punctuation="ptb",
        split=_ptb_split,
        version_of=_ptb_version,
        languages=languages,
    )


def _segmenter_scheme(
    name: str, segmenter: str, split: Callable[[str, bool], list[str]], languages: set[str], *packages: str
) -> Scheme:
    """The whitespace normalisation, then a library's word segmentation (``segmenter`` in the summary);
    its version is that of the installed ``packages``."""
    return Scheme(
        name=name,
        summary=f"the whitespace normalisation, then {segmenter}",
        punctuation="unicode",
        split=split,
        version_of=lambda: _installed(name, *packages),
        languages=frozenset(languages),
    )


SCHEMES: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme(
            name=WHITESPACE,
            summary="NFC, lowercase, Unicode punctuation to spaces, split on whitespace",
            punctuation="unicode",
            split=_whitespace,
            version_of=_static("1"),
        ),
        Scheme(
            name=CHAR,
            summary="the whitespace normalisation, then one token per grapheme cluster (Latin/digit runs whole)",
            punctuation="unicode",
            split=_char,
            version_of=_char_version,
        ),
        _ptb_scheme(
            COCO_PTB,
            "the COCO server's PTB tokenisation, pycocoevalcap's punctuation removed",
            frozenset({"en"}),
        ),
        _ptb_scheme(
            XM3600_PTB,
            "the COCO server's PTB tokenisation on any language, as big_vision's XM3600 evaluator",
        ),
        _segmenter_scheme(
            JIEBA, "jieba's precise-mode word segmentation", _jieba_split, {"zh", "yue"}, "jieba"
        ),
        _segmenter_scheme(
            MECAB, "MeCab words (fugashi, UniDic-lite)", _mecab_split, {"ja"}, "fugashi", "unidic-lite"
        ),
        _segmenter_scheme(NEWMM, "PyThaiNLP's newmm word segmentation", _newmm_split, {"th"}, "pythainlp"),
    )
}
assert tuple(SCHEMES) == SCHEME_NAMES, "core.tokenisation.SCHEME_NAMES and the registry must agree"


# Names recorded by runs made before schemes: the per-character tokenizer became ``char``.
LEGACY_NAMES = {"character": CHAR}


def scheme(name: str, *, language: str | None = None) -> Scheme:
    """The scheme called ``name`` (or its old name, see :data:`LEGACY_NAMES`); :class:`UnknownScheme`
    (naming the language, if given) otherwise."""
    try:
        return SCHEMES[LEGACY_NAMES.get(name, name)]
    except (KeyError, TypeError):
        raise UnknownScheme(
            f"unknown tokenisation scheme {name!r}{_for_language(language)}; choose one of {', '.join(SCHEMES)}"
        ) from None


def default_scheme(language_code: str) -> Scheme:
    """The default scheme of a language (see :func:`core.tokenisation.default_scheme_name`)."""
    return SCHEMES[default_scheme_name(language_code)]


def scheme_for_language(language_code: str | None, name: str | None = None) -> Scheme:
    """The scheme to tokenise ``language_code`` with: ``name`` if given, else the language's default.

    Checks everything before any caption is tokenised: the name is known, the scheme is meant for
    the language (when one is given), and its library is installed (its version can be read).
    Raises :class:`SchemeError` subclasses whose message names the scheme and the language.
    """
    language = (language_code or "").strip() or None
    if language is None and not name:
        raise SchemeError("no language and no tokenisation scheme given: name one of them")
    chosen = scheme(name, language=language) if name else default_scheme(language)
    if language is not None:
        chosen.check_language(language)
    chosen.version(language=language)
    return chosen


# --- Signatures ---------------------------------------------------------------------------------


def text_signature(
    tokenisation: Scheme | str,
    *,
    df_source: str = "test",
    lowercase: bool = True,
    language: str | None = None,
) -> str:
    """The signature of text-metric numbers, in the style of sacrebleu's.

    ``tok:<scheme>@<version>|case:<lc|mixed>|punct:<rule>|df:<CIDEr document frequencies>|impl:text-<n>``,
    e.g. ``tok:coco-ptb@corenlp-3.4.1/1|case:lc|punct:ptb|df:test|impl:text-1``. ``tokenisation`` may
    be :data:`PRETOKENIZED` (captions arrive as tokens: ``tok:pretokenized|case:as-given|punct:as-given``).
    Two numbers are comparable exactly when their signatures are equal.
    """
    head = tokens_signature(tokenisation, lowercase=lowercase, language=language)
    return f"{head}|df:{df_source}|impl:text-{TEXT_METRICS_VERSION}"


def tokens_signature(
    tokenisation: Scheme | str, *, lowercase: bool = True, language: str | None = None
) -> str:
    """The part of a signature that says how captions became tokens: ``tok:…|case:…|punct:…``
    (also the provenance of tokenised caption exports)."""
    if isinstance(tokenisation, str) and tokenisation == PRETOKENIZED:
        return f"tok:{PRETOKENIZED}|case:as-given|punct:as-given"
    chosen = tokenisation if isinstance(tokenisation, Scheme) else scheme(tokenisation, language=language)
    case = "lc" if lowercase else "mixed"
    return f"tok:{chosen.name}@{chosen.version(language=language)}|case:{case}|punct:{chosen.punctuation}"
