"""The helpers that state one rule for many callers: rows named by a person (core.lookups), an optional
reference (core.models.optional_fk), API serializers built from result dataclasses, the metric choices
built from the metric names, and the translated guidelines' scale labels read from the catalogue."""

from __future__ import annotations

import pytest
from django.db import models
from django.utils import translation

from annotation.guideline_texts import scale_labels
from annotation.interface import SCALE_LABELS
from annotation.models import Campaign, Language
from core.errors import NotFound, ValidationFailed
from core.lookups import each_named, row_by_id
from core.models import one_of, optional_fk
from core.scales import RATING, SXS
from evaluation.human.quality import QualityRow
from evaluation.models import ALL_METRICS, Metric
from evaluation.research.api.serializers import QualitySerializer
from evaluation.research.api.serializers.base import result_serializer
from tests import factories as f


@pytest.mark.django_db
def test_named_rows_come_in_the_order_given_each_once_and_every_unknown_name_is_named():
    f.LanguageFactory(code="de"), f.LanguageFactory(code="ja")
    found = each_named(Language.objects.all(), "code", [" ja", "de", "ja", ""], empty="none", unknown=str)
    assert [language.code for language in found] == ["ja", "de"]
    with pytest.raises(ValidationFailed, match=r"\['xx', 'yy'\]"):
        each_named(Language.objects.all(), "code", ["de", "xx", "yy"], empty="none", unknown=str)
    with pytest.raises(ValidationFailed, match="none"):
        each_named(Language.objects.all(), "code", [" ", ""], empty="none", unknown=str)


def test_an_optional_reference_is_null_blank_and_protects_what_it_names_by_default():
    field = optional_fk(Campaign, "+", help_text="Some campaign.")
    _name, _path, args, kwargs = field.deconstruct()
    assert kwargs["null"] and kwargs["blank"] and kwargs["on_delete"] is models.PROTECT
    assert kwargs["help_text"] == "Some campaign."
    assert optional_fk(Campaign, "+", on_delete=models.SET_NULL).remote_field.on_delete is models.SET_NULL


def test_a_choice_constraint_admits_exactly_the_choices_values():
    constraint = one_of("metric", Metric, "some_metric")
    assert constraint.name == "some_metric"
    assert constraint.condition.children == [("metric__in", list(ALL_METRICS))]


@pytest.mark.django_db
def test_the_database_refuses_a_value_outside_the_choices():
    from django.db import IntegrityError, transaction

    score = f.CaptionScoreFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        type(score).objects.filter(pk=score.pk).update(metric="BLEU-5")


def test_a_result_serializer_has_the_dataclass_fields_in_order_nullable_where_the_type_is():
    fields = QualitySerializer().fields
    assert list(fields) == [field for field in QualityRow.__dataclass_fields__]
    assert fields["pct_bad"].allow_null and not fields["n_captions"].allow_null
    row = QualityRow("de", 3, 2, 50.0, 100.0, None, 10.0, 1, 7)
    assert QualitySerializer(row).data["pct_bad"] is None
    partial = result_serializer(
        QualityRow, "Partial", exclude=("nei_rate",), help_texts={"n_rated": "With a median."}
    )
    assert "nei_rate" not in partial().fields and partial().fields["n_rated"].help_text == "With a median."


def test_the_metric_choices_are_the_metric_names_each_once_in_order():
    assert Metric.values == list(ALL_METRICS)
    assert Metric.labels == list(ALL_METRICS)
    assert (Metric.BLEU_4, Metric.CIDER_D, Metric.REFCLIPSCORE) == ("BLEU-4", "CIDEr-D", "RefCLIPScore")


@pytest.mark.parametrize("language", ["de", "ar", "ja"])
def test_the_guidelines_scale_labels_are_the_ones_the_buttons_show(language):
    labels = scale_labels(language)
    assert set(labels) == {p.label for p in RATING} | {p.label for p in SXS}
    with translation.override(language):
        assert labels == {label: str(text) for label, text in SCALE_LABELS.items()}


@pytest.mark.django_db
def test_a_row_by_id_is_the_querysets_row_or_not_found_naming_what_and_which():
    german = f.LanguageFactory(code="de")
    assert row_by_id(Language.objects.all(), german.pk, "language") == german
    with pytest.raises(NotFound, match=rf"^There is no language #{german.pk + 1000}\.$"):
        row_by_id(Language.objects.all(), german.pk + 1000, "language")
    with pytest.raises(NotFound):  # in the table, but not in the queryset
        row_by_id(Language.objects.exclude(pk=german.pk), german.pk, "language")
