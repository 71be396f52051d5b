"""Languages, with names and script direction from CLDR (Babel) rather than a hand-kept table."""

from __future__ import annotations

from dataclasses import dataclass

from babel import Locale, UnknownLocaleError
from django.db import transaction

from annotation.models import Language, TextDirection
from core.errors import ValidationFailed
from core.tokenisation import default_scheme_name

# XM3600 uses a few legacy or non-CLDR codes.
CLDR_ALIASES = {"iw": "he", "quz": "qu", "fil": "fil", "no": "nb"}


def language_defaults(code: str) -> dict:
    """Name, direction and tokenisation scheme for a language code, from CLDR where it knows the code.

    The scheme is the language's default (:func:`core.tokenisation.default_scheme_name`).
    """
    base = code.replace("_", "-").split("-")[0].lower()
    try:
        locale = Locale.parse(CLDR_ALIASES.get(base, base))
        name = locale.get_display_name("en") or code
        direction = TextDirection.RTL if locale.character_order == "right-to-left" else TextDirection.LTR
    except (UnknownLocaleError, ValueError):
        name, direction = code, TextDirection.LTR
    return {"name": name, "direction": direction, "tokenizer": default_scheme_name(code)}


def language_ensure(*, code: str, name: str | None = None) -> Language:
    """Get or create the language ``code``; a new one takes its name and direction from CLDR."""
    code = code.strip()
    if problem := language_code_problem(code):
        raise ValidationFailed(problem)
    with transaction.atomic():
        defaults = language_defaults(code)
        if name:
            defaults["name"] = name
        language, _ = Language.objects.get_or_create(code=code, defaults=defaults)
        return language


# The 36 languages of Crossmodal-3600, with the codes its files use (Hebrew "iw", Norwegian "no",
# Cusco Quechua "quz"; CLDR_ALIASES gives their names and direction).
XM3600_LANGUAGES = (
    "ar", "bn", "cs", "da", "de", "el", "en", "es", "fa", "fi", "fil", "fr", "hi", "hr", "hu", "id", "it",
    "iw", "ja", "ko", "mi", "nl", "no", "pl", "pt", "quz", "ro", "ru", "sv", "sw", "te", "th", "tr", "uk",
    "vi", "zh",
)  # fmt: skip


@dataclass(frozen=True)
class LanguagesAdded:
    created: list[Language]  # new, with CLDR's name, direction and the default scheme
    existing: list[Language]  # already there, left as they were (a manager may have edited them)


def language_code_problem(code: str) -> str | None:
    if not code or len(code) > 16 or not all(ch.isalnum() or ch in "-_" for ch in code):
        return f"“{code}” is not a language code."
    return None


def languages_add(*, codes: list[str], dry_run: bool = False) -> LanguagesAdded:
    """Add every language of ``codes`` that is not there yet, each with its CLDR name, script direction
    and default tokenisation scheme; languages already there are left unchanged. All or nothing: one
    malformed code refuses the whole list (ValidationFailed naming every bad code) and stores nothing.
    Idempotent. ``dry_run`` says what would be added and stores nothing."""
    wanted = list(dict.fromkeys(code.strip() for code in codes if code.strip()))
    if not wanted:
        raise ValidationFailed("Give at least one language code.")
    problems = [problem for code in wanted if (problem := language_code_problem(code))]
    if problems:
        raise ValidationFailed(" ".join(problems), details={"codes": problems})
    with transaction.atomic():
        existing = {language.code: language for language in Language.objects.filter(code__in=wanted)}
        new = [Language(code=code, **language_defaults(code)) for code in wanted if code not in existing]
        if not dry_run:
            Language.objects.bulk_create(new)
        return LanguagesAdded(created=new, existing=[existing[c] for c in wanted if c in existing])
