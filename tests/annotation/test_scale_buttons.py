"""The scale buttons of the item screens (annotation_i18n.scale_buttons, issue 24): the markup the
template's loop over the scale wrote, byte for byte, in every interface language and for every
stored value, with each point's forms made once per page."""

from __future__ import annotations

import pytest
from django.template import engines
from django.utils import translation

from annotation.interface import ShownScale
from core.scales import RATING, SXS

LOOP = """{% for point in scale %}
          <button type="button" role="radio" class="choice" data-value="{{ point.code }}" data-key="{{ point.key }}" aria-checked="{% if row.value == point.code %}true{% else %}false{% endif %}"><kbd>{{ point.key }}</kbd> {{ point.label }}</button>
        {% endfor %}"""
TAG = "{% load annotation_i18n %}{% scale_buttons scale row.value %}"


@pytest.mark.parametrize("language", ["en", "de", "ar", "ja"])
@pytest.mark.parametrize("scale", [RATING, SXS], ids=["rating", "sxs"])
def test_the_buttons_are_the_loops_markup(language, scale):
    engine = engines["django"]
    loop, tag = engine.from_string(LOOP), engine.from_string(TAG)
    with translation.override(language):
        shown = ShownScale(scale)
        for value in ["", *(point.code for point in scale), "not-a-point"]:
            context = {"scale": shown, "row": {"value": value}}
            assert tag.render(context) == loop.render(context)


def test_the_forms_made_in_one_language_are_not_reused_in_another():
    engine = engines["django"]
    tag = engine.from_string(TAG)
    with translation.override("en"):
        shown = ShownScale(RATING)
        english = tag.render({"scale": shown, "row": {"value": ""}})
    with translation.override("de"):
        # The same scale object (its labels were translated when it was made): the forms are made
        # again under the new language, not taken from the English page's cache.
        again = tag.render({"scale": shown, "row": {"value": ""}})
    assert again == english
    assert shown._button_forms[0] == "de"
