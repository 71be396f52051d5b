"""What a written caption must be before it is stored: plain functions over plain data (no Django).

Three checks, each answering with a message that says what to change, or None:

* **script**: most letters of the caption are in the script(s) its language is written in
  (Japanese: kana or kanji; Arabic: Arabic script; German: Latin; ...). Cheap and exact; a
  language without an entry in ``SCRIPTS`` is not checked.
* **language**: py3langid (model shipped inside the wheel, nothing downloaded) refuses a
  caption it attributes to *another* language with probability >= the campaign's threshold.
  Its probabilities on a caption of a few words are spread over related languages, so
  the check refuses only a confident verdict for a different language; an unsure one passes.
  Languages py3langid does not know are not checked.
* **length**: at least a minimum number of units, counted the way the language is tokenised:
  grapheme clusters for the per-character languages (zh, ja, th, ...), words elsewhere.
* **near copy**: the English prompt caption with a word or two changed. Similarity after
  normalisation (NFKC, casefold, punctuation and symbols dropped) is the larger of the Dice
  coefficient of character trigrams and the share of the caption's words found in the prompt;
  at or above the threshold the caption is refused.

The figures behind the defaults are measured by ``benchmarks/bench_caption_checks.py`` and
written down in docs/protocol.md.
"""

from __future__ import annotations

import threading
import unicodedata
from dataclasses import dataclass

import regex

# Defaults a campaign starts with (annotation.models.Campaign reads them from here).
DEFAULT_LANGUAGE_THRESHOLD = 0.7
DEFAULT_NEAR_COPY_THRESHOLD = 0.75
# Minimum caption length when the campaign leaves it empty: words, or grapheme clusters for
# the per-character languages. XM3600 captions average about 10 words; a real description is
# rarely under 3 words (or 5 characters of Japanese, 4 of Chinese).
DEFAULT_MIN_WORDS = 3
DEFAULT_MIN_CHARACTERS = {"zh": 4, "yue": 4, "ja": 5, "th": 6, "lo": 6, "km": 6, "my": 6, "bo": 6}
DEFAULT_MIN_CHARACTERS_OTHER = 5

# Unicode scripts a language is written in (base language code). Latin letters mixed into
# another script (brand names, "Tシャツ") are allowed: at least half the letters must be in
# the language's scripts.
_CJK = ("Han", "Hiragana", "Katakana")
SCRIPTS: dict[str, tuple[str, ...]] = {
    "ja": _CJK,
    "zh": ("Han",),
    "yue": ("Han",),
    "ko": ("Hangul", "Han"),
    "ar": ("Arabic",),
    "fa": ("Arabic",),
    "ur": ("Arabic",),
    "he": ("Hebrew",),
    "el": ("Greek",),
    "ru": ("Cyrillic",),
    "uk": ("Cyrillic",),
    "bg": ("Cyrillic",),
    "mk": ("Cyrillic",),
    "hi": ("Devanagari",),
    "mr": ("Devanagari",),
    "ne": ("Devanagari",),
    "bn": ("Bengali",),
    "te": ("Telugu",),
    "ta": ("Tamil",),
    "kn": ("Kannada",),
    "ml": ("Malayalam",),
    "gu": ("Gujarati",),
    "pa": ("Gurmukhi",),
    "th": ("Thai",),
    "lo": ("Lao",),
    "km": ("Khmer",),
    "my": ("Myanmar",),
    "ka": ("Georgian",),
    "hy": ("Armenian",),
    "am": ("Ethiopic",),
    "si": ("Sinhala",),
    **{
        code: ("Latin",)
        for code in [
            "en",
            "de",
            "fr",
            "es",
            "it",
            "pt",
            "nl",
            "sv",
            "da",
            "no",
            "nb",
            "nn",
            "fi",
            "pl",
            "cs",
            "sk",
            "sl",
            "hr",
            "ro",
            "hu",
            "tr",
            "id",
            "ms",
            "vi",
            "tl",
            "fil",
            "sw",
            "et",
            "lv",
            "lt",
            "mi",
            "quz",
            "eu",
            "ca",
            "gl",
            "cy",
            "ga",
            "is",
            "af",
            "sq",
            "az",
            "uz",
        ]
    },
}
_SCRIPT_NAMES = {"Arabic": "Arabic", "Han": "Chinese characters", "Latin": "Latin", "Cyrillic": "Cyrillic"}

# The identifier's labels for a platform language code, and the labels counted as the same
# language (py3langid splits Arabic into dialects and Norwegian into two written standards;
# on a short caption it cannot tell Malay from Indonesian or the Serbo-Croatian standards apart).
_LANGID_LABELS: dict[str, frozenset[str]] = {
    "ar": frozenset({"ar", "ary", "arz"}),
    "no": frozenset({"no", "nn", "da"}),
    "nb": frozenset({"no", "nn", "da"}),
    "nn": frozenset({"no", "nn", "da"}),
    "da": frozenset({"da", "no", "nn"}),
    "ms": frozenset({"ms", "id"}),
    "id": frozenset({"id", "ms"}),
    "hr": frozenset({"hr", "sr", "bs"}),
    "sr": frozenset({"sr", "hr", "bs"}),
    "bs": frozenset({"bs", "hr", "sr"}),
    "zh": frozenset({"zh", "wuu", "yue"}),
    "yue": frozenset({"yue", "zh", "wuu"}),
    "fil": frozenset({"tl"}),
    "tl": frozenset({"tl"}),
    "fa": frozenset({"fa", "tg"}),
}
# "No linguistic content": never a reason to refuse.
_LANGID_IGNORED = frozenset({"zxx"})

LANGUAGE_NAMES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "ar": "Arabic",
    "ja": "Japanese",
    "zh": "Chinese",
    "ru": "Russian",
}


@dataclass(frozen=True)
class CaptionRules:
    """The checks a campaign applies, as plain data."""

    language: str  # the campaign language's code (BCP 47)
    per_character: bool  # the language is tokenised per character
    min_length: int | None = None  # None: the language's default
    language_check: bool = True
    language_threshold: float = DEFAULT_LANGUAGE_THRESHOLD
    near_copy_threshold: float = DEFAULT_NEAR_COPY_THRESHOLD

    @property
    def base(self) -> str:
        return base_language(self.language)

    @property
    def minimum(self) -> int:
        if self.min_length is not None:
            return self.min_length
        return default_min_length(self.language, per_character=self.per_character)


def base_language(code: str) -> str:
    return code.replace("_", "-").split("-")[0].lower()


def default_min_length(code: str, *, per_character: bool) -> int:
    if per_character:
        return DEFAULT_MIN_CHARACTERS.get(base_language(code), DEFAULT_MIN_CHARACTERS_OTHER)
    return DEFAULT_MIN_WORDS


def normalise(text: str) -> str:
    """NFKC, casefold, punctuation and symbols dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch).startswith(("P", "S")) else ch for ch in text)
    return " ".join(text.split())


def length(text: str, *, per_character: bool) -> int:
    """Words, or grapheme clusters (spaces, punctuation and symbols not counted)."""
    norm = normalise(text)
    if per_character:
        return sum(1 for g in regex.findall(r"\X", norm) if not g.isspace())
    return len(norm.split())


def _trigrams(text: str) -> list[str]:
    padded = f" {text} "
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


def similarity(text: str, prompt: str) -> float:
    """How much ``text`` copies ``prompt``, 0 … 1 (1: the same after normalisation)."""
    a, b = normalise(text), normalise(prompt)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    ta, tb = _trigrams(a), _trigrams(b)
    ca: dict[str, int] = {}
    for t in ta:
        ca[t] = ca.get(t, 0) + 1
    shared = 0
    for t in tb:
        if ca.get(t, 0) > 0:
            ca[t] -= 1
            shared += 1
    dice = 2 * shared / (len(ta) + len(tb))
    words_a, words_b = a.split(), set(b.split())
    # Share of the caption's words taken from the prompt, damped when the caption is much
    # shorter than the prompt (two shared words of a long prompt are no copy).
    covered = sum(1 for w in words_a if w in words_b) / len(words_a)
    covered *= min(1.0, len(words_a) / len(words_b))
    return max(dice, covered)


def script_share(text: str, scripts: tuple[str, ...]) -> tuple[int, int]:
    """(letters in ``scripts``, all letters)."""
    letters = [ch for ch in text if unicodedata.category(ch).startswith("L")]
    pattern = regex.compile("|".join(rf"\p{{Script={s}}}" for s in scripts))
    return sum(1 for ch in letters if pattern.match(ch)), len(letters)


_IDENTIFIER = None
_IDENTIFIER_LOCK = threading.Lock()


def _identifier():
    """The language identifier, loaded once per process (about half a second of CPU: the model
    ships inside the wheel, LZMA-compressed). A lock makes it once even when the threads of one
    server process all reach their first submit together: without it each of them decompressed
    its own copy, and a cold server's first submits waited seconds behind one another."""
    global _IDENTIFIER
    if _IDENTIFIER is None:
        with _IDENTIFIER_LOCK:
            if _IDENTIFIER is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _IDENTIFIER = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _IDENTIFIER


def language_identifier_load() -> None:
    """Load the language identifier now (a web server process calls this as it starts, so that
    no annotator's submit waits for it)."""
    _identifier()


def langid_labels(code: str) -> frozenset[str] | None:
    """The identifier's labels that count as language ``code``; None when it does not know it."""
    base = base_language(code)
    labels = _LANGID_LABELS.get(base, frozenset({base}))
    known = labels & set(_identifier().labels)
    return known or None


def language_verdict(text: str, code: str) -> tuple[str, float] | None:
    """The most probable language other than ``code`` and its probability, or None if the
    identifier does not know ``code``."""
    labels = langid_labels(code)
    if labels is None:
        return None
    for label, prob in _identifier().rank(text):
        if label in labels or label in _LANGID_IGNORED:
            continue
        return label, float(prob)
    return None


def _name(code: str) -> str:
    return LANGUAGE_NAMES.get(base_language(code), code)


# --- Messages: English text that the Django layer can show in the annotator's language ------------


def gettext_noop(message: str) -> str:
    """Marks ``message`` for the translation catalogue (makemessages finds it by this name) without
    translating it: this module imports no Django. ``annotation.interface.localized_problem``
    translates a :class:`Problem` where it is shown."""
    return message


class LanguageCode(str):
    """A language code inside a message: named in whatever language the message is read in."""


class ScriptNames(tuple):
    """Writing systems (``regex`` script names) inside a message, named like a ``LanguageCode``."""


def in_english(value):
    if isinstance(value, LanguageCode):
        return _name(value)
    if isinstance(value, ScriptNames):
        return " or ".join(_SCRIPT_NAMES.get(s, s) for s in value)
    return value


class Problem(str):
    """A check's answer: the English text itself (a ``str``), which also keeps its message
    template and values, so that the annotator can read it in their interface language."""

    template: str
    params: dict

    def __new__(cls, template: str, **params):
        problem = super().__new__(cls, template % {k: in_english(v) for k, v in params.items()})
        problem.template = template
        problem.params = params
        return problem


def script_problem(text: str, rules: CaptionRules) -> str | None:
    scripts = SCRIPTS.get(rules.base)
    if not scripts:
        return None
    inside, letters = script_share(text, scripts)
    if letters and 2 * inside >= letters:
        return None
    if rules.base == "ja":
        return Problem(
            gettext_noop("This caption is not written in %(language)s: write it in kana or kanji."),
            language=LanguageCode(rules.language),
        )
    return Problem(
        gettext_noop("This caption is not written in %(language)s: write it in %(script)s script."),
        language=LanguageCode(rules.language),
        script=ScriptNames(scripts),
    )


def length_problem(text: str, rules: CaptionRules) -> str | None:
    n, minimum = length(text, per_character=rules.per_character), rules.minimum
    if n >= minimum:
        return None
    if rules.per_character:
        template = gettext_noop(
            "This caption is too short (%(n)s of at least %(minimum)s characters). "
            "Describe what the image shows in a full sentence."
        )
    else:
        template = gettext_noop(
            "This caption is too short (%(n)s of at least %(minimum)s words). "
            "Describe what the image shows in a full sentence."
        )
    return Problem(template, n=n, minimum=minimum)


def language_problem(text: str, rules: CaptionRules) -> str | None:
    if not rules.language_check:
        return None
    verdict = language_verdict(text, rules.language)
    if verdict is None:
        return None
    label, prob = verdict
    if prob < rules.language_threshold:
        return None
    return Problem(
        gettext_noop("This caption looks like %(detected)s, not %(language)s. Write it in %(language)s."),
        detected=LanguageCode(label),
        language=LanguageCode(rules.language),
    )


def near_copy_problem(text: str, prompt: str | None, rules: CaptionRules) -> str | None:
    if not prompt or similarity(text, prompt) < rules.near_copy_threshold:
        return None
    return Problem(
        gettext_noop(
            "This is almost the English caption from screen 1 with a few words changed. "
            "Describe the image in your own words, in %(language)s."
        ),
        language=LanguageCode(rules.language),
    )


def caption_rules_problem(text: str, prompt: str | None, rules: CaptionRules) -> str | None:
    """The first problem of a non-empty caption under ``rules`` (cheapest checks first), or None."""
    return (
        near_copy_problem(text, prompt, rules)
        or script_problem(text, rules)
        or length_problem(text, rules)
        or language_problem(text, rules)
    )
