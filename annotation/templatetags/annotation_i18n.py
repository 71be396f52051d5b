"""Template filters of the annotator pages' languages."""

from __future__ import annotations

from django import template

from annotation.interface import language_name

register = template.Library()


@register.filter
def in_interface_language(language) -> str:
    """A campaign language's name in the interface language ("Deutsch", "ドイツ語"), from CLDR
    (Babel); the name stored for the language where CLDR has none."""
    return language_name(language)
