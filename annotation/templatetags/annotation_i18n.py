"""Template filters of the annotator pages' languages."""

from __future__ import annotations

from django import template

from annotation.interface import language_name, list_separators

register = template.Library()


@register.filter
def in_interface_language(language) -> str:
    """A campaign language's name in the interface language ("Deutsch", "ドイツ語"), from CLDR
    (Babel); the name stored for the language where CLDR has none."""
    return language_name(language)


@register.simple_tag
def list_separator(forloop) -> str:
    """Inside ``{% for %}``, what follows the current item of a list in the interface language
    ("", after the last): ``{% list_separator forloop %}`` after each item."""
    if forloop["last"]:
        return ""
    length = forloop["counter"] + forloop["revcounter"] - 1
    return list_separators(length)[forloop["counter0"]]
