"""Template filters of the annotator pages' languages."""

from __future__ import annotations

from django import template
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import mark_safe

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


@register.simple_tag
def scale_buttons(scale, value) -> str:
    """The buttons of one item's scale (templates/annotation/item_list_base.html), the point ``value``
    checked: each point's code, key and label in the interface language, as the loop over the scale
    wrote them. Each point's two forms are made once per page and scale, not once per item: on a
    screen of a batch they were most of its template's work."""
    language = translation.get_language()
    cached = getattr(scale, "_button_forms", None)
    forms = cached[1] if cached is not None and cached[0] == language else None
    if forms is None:
        forms = []
        for point in scale:
            head = format_html(
                '\n          <button type="button" role="radio" class="choice" data-value="{}" data-key="{}" aria-checked="',
                point.code,
                point.key,
            )
            tail = format_html('"><kbd>{}</kbd> {}</button>\n        ', point.key, point.label)
            forms.append((point.code, head + "true" + tail, head + "false" + tail))
        scale._button_forms = (language, forms)
    return mark_safe("".join(checked if value == code else unchecked for code, checked, unchecked in forms))  # noqa: S308 - each part made by format_html
