"""What a written caption must be, read from its campaign: the one check the annotator screens, the
API and the tutorial ask before a caption is stored (the pure checks are annotation.caption_checks)."""

from __future__ import annotations

import unicodedata

from django.utils.translation import gettext

from annotation.caption_checks import CaptionRules, caption_rules_problem
from annotation.interface import localized_problem
from annotation.models import Campaign
from core.tokenisation import counts_characters

CAPTION_MAX_CHARS = 1000


def _comparable(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith(("P", "S")))
    return " ".join(text.split())


def caption_rules(campaign: Campaign) -> CaptionRules:
    """The caption checks of ``campaign`` (its settings, the language's tokeniser), as plain data."""
    return CaptionRules(
        language=campaign.language.code,
        per_character=counts_characters(campaign.language.tokenizer, campaign.language.code),
        min_length=campaign.min_caption_length,
        language_check=campaign.language_check,
        language_threshold=campaign.language_check_threshold,
        near_copy_threshold=campaign.near_copy_threshold,
    )


def caption_too_long() -> str:
    return gettext("A caption can be at most %(n)s characters.") % {"n": CAPTION_MAX_CHARS}


def caption_problem(text: str, prompt_text: str | None, rules: CaptionRules | None = None) -> str | None:
    """Why a written caption cannot be accepted, or None.

    Empty, over-long and exact copies of the prompt always; with ``rules`` also the
    campaign's checks (script, language, length, near copy: annotation.caption_checks).
    """
    if not text.strip():
        return gettext("Write a caption for this image.")
    if len(text) > CAPTION_MAX_CHARS:
        return caption_too_long()
    if prompt_text and _comparable(text) == _comparable(prompt_text):
        return gettext(
            "This repeats the English caption from screen 1. Describe the image in your own words."
        )
    if rules is not None:
        return localized_problem(caption_rules_problem(text, prompt_text, rules))
    return None
