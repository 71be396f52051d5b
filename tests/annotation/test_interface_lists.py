"""Lists the annotator interface shows use the interface language's list pattern (CLDR, through
Babel), in code (the services' messages) and in templates (the scale's keys): issue 22, item 11."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.urls import reverse
from django.utils import translation

from annotation.interface import interface_list, list_separators
from tests.annotation.test_screens import start_batch


@pytest.mark.parametrize(
    ("language", "expected"),
    [("en", "1, 2, 3"), ("de", "1, 2 und 3"), ("ar", "1 و2 و3"), ("ja", "1、2、3")],
)
def test_a_list_reads_as_the_interface_language_writes_one(language, expected):
    assert interface_list([1, 2, 3], language) == expected
    with translation.override(language):
        assert interface_list(["1", "2", "3"]) == expected


def test_the_separators_are_what_stands_between_the_items():
    assert list_separators(3, "de") == [", ", " und "]
    assert list_separators(2, "ar") == [" و"]
    assert list_separators(1, "ar") == [] and interface_list([], "ar") == ""


def test_a_template_lists_its_own_items_with_the_separators():
    template = Template(
        "{% load annotation_i18n %}{% for x in items %}<b>{{ x }}</b>{% list_separator forloop %}{% endfor %}"
    )
    with translation.override("ar"):
        assert (
            template.render(Context({"items": ["أ", "ب", "<c>"]})) == "<b>أ</b> و<b>ب</b> و<b>&lt;c&gt;</b>"
        )
    with translation.override("en"):
        assert template.render(Context({"items": ["a"]})) == "<b>a</b>"


def test_the_positions_still_unrated_are_listed_in_arabic(annotator_client, annotator, campaign):
    annotator.interface_language = "ar"
    annotator.save()
    batch = start_batch(annotator_client, campaign)
    r = annotator_client.post(
        reverse("annotation:api_open_writing", args=[batch.pk]),
        {},
        content_type="application/json",
        headers={"accept-language": "ar"},
    )
    assert r.status_code == 400
    message = r.json()["message"]
    assert "1 و2 و3" in message and "," not in message
