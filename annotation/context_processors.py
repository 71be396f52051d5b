"""Template context for the interface-language selector in the top bar (templates/base.html)."""

from __future__ import annotations

from django.utils import translation

from annotation.interface import interface_languages


def interface_language(request) -> dict:
    """The selector is offered to annotators and to visitors not logged in (the login page);
    managers and researchers work in English and get none."""
    user = getattr(request, "user", None)
    annotator = getattr(request, "interface_annotator", None)
    show = user is None or not user.is_authenticated or annotator is not None
    if not show:
        return {}
    return {
        "interface_languages": interface_languages(),
        "interface_language_chosen": annotator.interface_language if annotator is not None else None,
        "interface_language_active": translation.get_language(),
    }
