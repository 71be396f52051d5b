"""Languages, with names and script direction from CLDR (Babel) rather than a hand-kept table."""

from __future__ import annotations

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
    if not code or len(code) > 16 or not all(ch.isalnum() or ch in "-_" for ch in code):
        raise ValidationFailed(f"“{code}” is not a language code.")
    with transaction.atomic():
        defaults = language_defaults(code)
        if name:
            defaults["name"] = name
        language, _ = Language.objects.get_or_create(code=code, defaults=defaults)
        return language
