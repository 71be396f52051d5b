"""Template filters of the annotator pages' languages."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils import translation
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

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


@register.simple_tag
def item_thumb(row, counter: int, zoom_key: str = "z") -> str:
    """An item's thumbnail (it enlarges on click) and its "report a problem" button, for the item
    screens' rows: ``row`` with ``position``, ``image_id``, ``assignment_id`` and ``reported``
    (absent: not reported); ``counter``, the row's place (the first three load at once, the rest
    lazily). Written in Python rather than as two included templates, which cost about a tenth of
    a screen's template time. The translated sentences are the templates' (same catalogue entries),
    inserted as ``blocktranslate`` inserts them: the text as translated, the position escaped."""
    position = conditional_escape(row["position"])
    if row.get("reported"):
        report = format_html(
            '<button type="button" class="linklike report-open" disabled data-assignment="{}">{}</button>\n',
            row["assignment_id"],
            gettext("Reported"),
        )
    else:
        report = format_html(
            '<button type="button" class="linklike report-open" aria-haspopup="dialog" '
            'aria-controls="report-dialog" data-assignment="{}">{}</button>\n',
            row["assignment_id"],
            mark_safe(gettext("Report a problem with image %(position)s") % {"position": position}),  # noqa: S308 - the catalogue's text, the position escaped
        )
    thumb = format_html(
        '<div class="thumb"><button type="button" class="zoom-open" aria-label="{}" aria-haspopup="dialog" '
        'aria-controls="zoom"><img src="{}" alt="{}" loading="{}"><span class="zoom-hint" aria-hidden="true">{}'
        '<span class="key-hint"> ({})</span></span></button></div>\n',
        mark_safe(gettext("Enlarge image %(position)s") % {"position": position}),  # noqa: S308 - as above
        reverse("annotation:image", args=[row["image_id"]]),
        mark_safe(gettext("Image %(position)s") % {"position": position}),  # noqa: S308 - as above
        "eager" if counter < 4 else "lazy",
        gettext("Enlarge"),
        zoom_key or "z",
    )
    return thumb + report + mark_safe("\n")
