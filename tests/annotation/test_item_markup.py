"""The parts of the item screens written in Python (annotation_i18n, issue 24): the scale buttons
and each item's thumbnail with its report button, byte for byte the markup the templates wrote
before (a loop over the scale; two included partials, kept here as the reference), in every
interface language, for every stored value, reported or not."""

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


# templates/annotation/partials/thumb.html and report_button.html as they were, the include inlined.
THUMB = (
    '{% load i18n %}<div class="thumb"><button type="button" class="zoom-open" aria-label="{% blocktranslate with position=row.position %}Enlarge image {{ position }}{% endblocktranslate %}" aria-haspopup="dialog" aria-controls="zoom"><img src="{% url \'annotation:image\' row.image_id %}" alt="{% blocktranslate with position=row.position %}Image {{ position }}{% endblocktranslate %}" loading="{% if forloop.counter < 4 %}eager{% else %}lazy{% endif %}"><span class="zoom-hint" aria-hidden="true">{% translate "Enlarge" %}<span class="key-hint"> ({{ zoom_key|default:"z" }})</span></span></button></div>'
    + "\n"
    + '{% if row.reported %}<button type="button" class="linklike report-open" disabled data-assignment="{{ row.assignment_id }}">{% translate "Reported" %}</button>{% else %}<button type="button" class="linklike report-open" aria-haspopup="dialog" aria-controls="report-dialog" data-assignment="{{ row.assignment_id }}">{% blocktranslate with position=row.position %}Report a problem with image {{ position }}{% endblocktranslate %}</button>{% endif %}'
    + "\n\n"
)


@pytest.mark.parametrize("language", ["en", "de", "ar", "ja"])
def test_the_thumbnail_and_report_button_are_the_partials_markup(language):
    engine = engines["django"]
    partials = engine.from_string(
        "{% load i18n %}{% for row in rows %}"
        + THUMB
        + "|{% with zoom_key='Alt+Z' %}"
        + THUMB
        + "{% endwith %}{% endfor %}"
    )
    tag = engine.from_string(
        "{% load annotation_i18n %}{% for row in rows %}{% item_thumb row forloop.counter %}|"
        '{% item_thumb row forloop.counter "Alt+Z" %}{% endfor %}'
    )
    rows = [
        {"position": p, "image_id": 100 + p, "assignment_id": 7000 + p, "reported": p % 2 == 0}
        for p in range(1, 8)
    ]
    with translation.override(language):
        assert tag.render({"rows": rows}) == partials.render({"rows": rows})
