"""The query parameters of the research API's lists, as django-filter FilterSets.

Each list endpoint names its FilterSet (``filterset_class``); :class:`ResearchFilterBackend` validates
the parameters and filters the selector's queryset, and drf-spectacular documents them from the same
classes. Refusals are 400 in the project's error shape (``core.errors.api_exception_handler``): a bad
value names its parameter (``kind: Select a valid choice…``), and an unknown parameter (a misspelt
filter) is refused rather than ignored, which would answer with everything.
"""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Exists, OuterRef, Q
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.settings import api_settings

from annotation.models import (
    Campaign,
    CampaignKind,
    CampaignState,
    CaptioningSystem,
    ImageSelection,
    Language,
    Rating,
    SxsJudgment,
    SystemCaption,
    WrittenCaption,
)
from core.bounds import BIGINT_MAX
from evaluation.models import (
    CaptionScore,
    ClipFineTune,
    ClipModel,
    ImageSet,
    Metric,
    MetricRun,
    ReferenceSet,
    RetrievalCheck,
    RunStatus,
)
from evaluation.research.api.selectors import RATING_KINDS
from evaluation.research.api.serializers import COMMON_QUERY_PARAMETERS


class ResearchFilterBackend(DjangoFilterBackend):
    """django-filter's backend, with the form's non-field errors under DRF's key (so the message
    reads "Unknown query parameter(s): …", not "__all__: …")."""

    def filter_queryset(self, request, queryset, view):
        filterset = self.get_filterset(request, queryset, view)
        if filterset is None:
            return queryset
        if not filterset.is_valid():
            raise ValidationError(
                {
                    (api_settings.NON_FIELD_ERRORS_KEY if key == "__all__" else key): list(messages)
                    for key, messages in filterset.errors.items()
                }
            )
        return filterset.qs


class StrictFilterSet(django_filters.FilterSet):
    """Refuses a parameter that is not one of its filters (or ``page`` / ``format``). A subclass's
    ``Meta`` extends this one and names only its ``model``."""

    class Meta:
        # Only the declared filters: none is made from the model's fields.
        fields: list[str] = []

    def is_valid(self) -> bool:
        unknown = sorted(set(self.data) - set(self.filters) - COMMON_QUERY_PARAMETERS)
        if unknown:
            known = ", ".join(sorted(set(self.filters) | {"page"}))
            self.form.add_error(
                None, f"Unknown query parameter(s): {', '.join(unknown)}. This endpoint takes: {known}."
            )
        return super().is_valid()


class IdFilter(django_filters.NumberFilter):
    """A positive integer id (NumberFilter alone would take 1.5)."""

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", BIGINT_MAX)  # what the id column holds
        super().__init__(*args, **kwargs)


class StrictBooleanField(forms.Field):
    """true/false (also 1/0, yes/no, on/off); anything else is an error, not "no filter" as
    django-filter's own boolean widgets would make of it."""

    TRUE = frozenset({"true", "1", "yes", "on"})
    FALSE = frozenset({"false", "0", "no", "off"})
    default_error_messages = {"invalid": "Give true or false."}

    def to_python(self, value):
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        raise forms.ValidationError(self.error_messages["invalid"], code="invalid")


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


def _language(field_name: str, **kwargs) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, max_length=16, **kwargs)


def _pseudonym(field_name: str) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, max_length=32, help_text="Pseudonym.")


def _image_key(field_name: str) -> django_filters.CharFilter:
    return django_filters.CharFilter(field_name=field_name, max_length=200, help_text="Image key.")


def having(model, row: str, lookup: str):
    """A filter method: the rows that at least one ``model`` object points at through ``row`` with the
    parameter's value at ``lookup`` (an ``EXISTS`` subquery, so a row never comes twice)."""

    def filter_having(self, queryset, name, value: str):
        return queryset.filter(Exists(model.objects.filter(**{row: OuterRef("pk"), lookup: value})))

    return filter_having


def clip_model_filter() -> django_filters.CharFilter:
    """A CLIP check's model, by the open_clip name in its ``params``."""
    return django_filters.CharFilter(
        field_name="params__clip_model", max_length=200, help_text="open_clip model name."
    )


# --- Languages, systems, reference and image sets ---------------------------------------------------


class LanguageFilter(StrictFilterSet):
    code = django_filters.CharFilter(max_length=16)

    class Meta(StrictFilterSet.Meta):
        model = Language


class SystemFilter(StrictFilterSet):
    language = _language("language", method="filter_language", help_text="Only systems with captions in it.")
    name = django_filters.CharFilter(max_length=100)

    class Meta(StrictFilterSet.Meta):
        model = CaptioningSystem

    filter_language = having(SystemCaption, "system", "language__code")


class ReferenceSetFilter(StrictFilterSet):
    language = _language("language__code")

    class Meta(StrictFilterSet.Meta):
        model = ReferenceSet


class ImageSelectionFilter(StrictFilterSet):
    language = _language("languages__language__code", help_text="Selections with a set for this language.")

    class Meta(StrictFilterSet.Meta):
        model = ImageSelection


class ImageSetFilter(StrictFilterSet):
    language = _language(
        "language", method="filter_language", help_text="Sets for this language and sets for every language."
    )

    class Meta(StrictFilterSet.Meta):
        model = ImageSet

    def filter_language(self, queryset, name, value: str):
        return queryset.filter(Q(language__code=value) | Q(language__isnull=True))


# --- Campaigns and submitted work -------------------------------------------------------------------


class CampaignFilter(StrictFilterSet):
    language = _language("language__code")
    kind = django_filters.ChoiceFilter(choices=CampaignKind.choices)
    state = django_filters.ChoiceFilter(choices=CampaignState.choices)

    class Meta(StrictFilterSet.Meta):
        model = Campaign


class WrittenCaptionFilter(StrictFilterSet):
    language = _language("language__code")
    campaign = IdFilter(field_name="campaign")
    image = _image_key("image__key")
    annotator = _pseudonym("annotator__pseudonym")

    class Meta(StrictFilterSet.Meta):
        model = WrittenCaption


class SxsJudgmentFilter(StrictFilterSet):
    language = _language("assignment__item__campaign__language__code")
    campaign = IdFilter(field_name="assignment__item__campaign")
    system = django_filters.CharFilter(
        method="filter_system", max_length=100, help_text="m1 or m2 of the campaign."
    )
    annotator = _pseudonym("assignment__annotator__pseudonym")
    control = StrictBooleanFilter(
        field_name="assignment__item__is_control", help_text="true: control items only; false: none."
    )

    class Meta(StrictFilterSet.Meta):
        model = SxsJudgment

    def filter_system(self, queryset, name, value: str):
        return queryset.filter(
            Q(assignment__item__campaign__base_system__name=value)
            | Q(assignment__item__campaign__test_system__name=value)
        )


class RatingFilter(StrictFilterSet):
    kind = django_filters.ChoiceFilter(
        choices=[(kind, kind) for kind in sorted(RATING_KINDS)],
        method="filter_kind",
        help_text="verification: ratings of human captions; prompt: screen 1 of caption campaigns.",
    )
    language = _language("assignment__item__campaign__language__code")
    campaign = IdFilter(field_name="assignment__item__campaign")
    annotator = _pseudonym("assignment__annotator__pseudonym")

    class Meta(StrictFilterSet.Meta):
        model = Rating

    def filter_kind(self, queryset, name, value: str):
        return queryset.filter(assignment__item__campaign__kind=RATING_KINDS[value])


# --- Metric runs -------------------------------------------------------------------------------------


class MetricRunFilter(StrictFilterSet):
    language = _language("language__code")
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    system = django_filters.CharFilter(
        method="filter_system", max_length=100, help_text="Runs that score it."
    )

    class Meta(StrictFilterSet.Meta):
        model = MetricRun

    filter_system = having(CaptioningSystem, "metric_runs", "name")


class RetrievalCheckFilter(StrictFilterSet):
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    model = clip_model_filter()

    class Meta(StrictFilterSet.Meta):
        model = RetrievalCheck


class ClipModelFilter(StrictFilterSet):
    is_demo = django_filters.BooleanFilter()

    class Meta(StrictFilterSet.Meta):
        model = ClipModel


class ClipFineTuneFilter(StrictFilterSet):
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)

    class Meta(StrictFilterSet.Meta):
        model = ClipFineTune


class CaptionScoreFilter(StrictFilterSet):
    system = django_filters.CharFilter(field_name="system__name", max_length=100)
    metric = django_filters.ChoiceFilter(choices=Metric.choices)
    image = _image_key("image__key")

    class Meta(StrictFilterSet.Meta):
        model = CaptionScore
