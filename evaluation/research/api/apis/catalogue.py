"""Languages, captioning systems, reference and image sets, and geographically diverse image selections."""

from __future__ import annotations

from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.response import Response

from annotation.selectors import (
    image_selection_detail,
    image_selection_list,
    selection_points,
)
from evaluation.research.api import filters, selectors
from evaluation.research.api.apis.base import (
    DETAIL_ERRORS,
    LIST_ERRORS,
    ResearchApi,
    ResearchListApi,
    list_endpoint,
)

# --- Languages, systems, reference and image sets ---------------------------------------------------


@extend_schema_serializer(component_name="Language")
class LanguageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    code = serializers.CharField()
    name = serializers.CharField()
    direction = serializers.CharField()
    tokenizer = serializers.CharField()


LanguageListApi = list_endpoint(
    "LanguageListApi",
    filters.LanguageFilter,
    selectors.language_list,
    LanguageSerializer,
    summary="Languages",
)


class SystemListApi(ResearchListApi):
    filterset_class = filters.SystemFilter

    @extend_schema_serializer(component_name="CaptioningSystem")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        description = serializers.CharField()
        languages = serializers.ListField(
            child=serializers.CharField(), help_text="Languages it has captions in."
        )

    @extend_schema(
        summary="Captioning systems",
        responses={200: OutputSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        systems = self.filtered(request, selectors.system_list())
        paginator, page = self.page_of(request, systems)
        languages = selectors.system_languages(system.pk for system in page)
        for system in page:
            system.languages = languages.get(system.pk, [])
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


@extend_schema_serializer(component_name="ReferenceSet")
class ReferenceSetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    language = serializers.CharField(source="language.code")
    kind = serializers.CharField(help_text="campaign: the written captions of a caption campaign.")
    campaign = serializers.IntegerField(source="campaign_id", allow_null=True)
    source_name = serializers.CharField()
    source_format = serializers.CharField()
    source_sha256 = serializers.CharField()
    description = serializers.CharField()


@extend_schema_serializer(component_name="ImageSet")
class ImageSetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    language = serializers.CharField(
        source="language.code", allow_null=True, default=None, help_text="null: every language."
    )
    n_images = serializers.IntegerField()
    seed = serializers.IntegerField(allow_null=True)
    description = serializers.CharField()


ReferenceSetListApi = list_endpoint(
    "ReferenceSetListApi",
    filters.ReferenceSetFilter,
    selectors.reference_set_list,
    ReferenceSetSerializer,
    summary="Reference sets (to start a metric run)",
)
ImageSetListApi = list_endpoint(
    "ImageSetListApi",
    filters.ImageSetFilter,
    selectors.image_set_list,
    ImageSetSerializer,
    summary="Image sets (to start a metric run)",
)


# --- Image selections (seed 000, sec. 2.2) -----------------------------------------------------------


class SelectionLanguageSerializer(serializers.Serializer):
    language = serializers.CharField(source="language.code")
    order = serializers.IntegerField(help_text="1: served first (the smallest candidate pool).")
    pool = serializers.IntegerField(help_text="Candidate images in the language's area.")
    target = serializers.IntegerField()
    region = serializers.IntegerField(
        source="n_region", help_text="Images from where the language is spoken."
    )
    country = serializers.IntegerField(source="n_country")
    continent = serializers.IntegerField(source="n_continent")
    global_ = serializers.IntegerField(source="n_global", label="global")
    missing = serializers.IntegerField(source="shortfall")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["global"] = data.pop("global_")
        return data


@extend_schema_serializer(component_name="ImageSelection")
class ImageSelectionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    seed = serializers.IntegerField()
    per_language = serializers.IntegerField()
    pool_query = serializers.CharField()
    pool_size = serializers.IntegerField()
    min_share = serializers.FloatField()
    geography = serializers.CharField(help_text="Data sources of the places.")
    languages = serializers.SerializerMethodField()

    @extend_schema_field(SelectionLanguageSerializer(many=True))
    def get_languages(self, obj):
        return SelectionLanguageSerializer(sorted(obj.languages.all(), key=lambda s: s.order), many=True).data


class SelectedImageSerializer(serializers.Serializer):
    language = serializers.CharField(source="language_set__language__code")
    rank = serializers.IntegerField()
    key = serializers.CharField(source="image__key")
    level = serializers.CharField(help_text="region, country, continent or global.")
    latitude = serializers.FloatField(source="image__latitude", allow_null=True)
    longitude = serializers.FloatField(source="image__longitude", allow_null=True)
    country_code = serializers.CharField(source="image__country_code")
    region = serializers.CharField(source="image__region")
    continent = serializers.CharField(source="image__continent")


ImageSelectionListApi = list_endpoint(
    "ImageSelectionListApi",
    filters.ImageSelectionFilter,
    image_selection_list,
    ImageSelectionSerializer,
    summary="Image selections with their per-language level table",
    description="How many images each language took from its regions, countries, continents and anywhere "
    "(manage.py select_images, or Image selections in the admin).",
)


class ImageSelectionDetailApi(ResearchApi):
    @extend_schema_serializer(component_name="ImageSelectionDetail")
    class OutputSerializer(ImageSelectionSerializer):
        images = SelectedImageSerializer(
            source="images_list", many=True, help_text="Per language in serving order, in drawing order."
        )

    @extend_schema(
        summary="An image selection with every selected image and its level",
        responses={200: OutputSerializer, **DETAIL_ERRORS},
    )
    def get(self, request, selection_id: int):
        selection = image_selection_detail(selection_id=selection_id)
        selection.images_list = selection_points(selection_id=selection.pk)
        data = self.OutputSerializer(selection).data
        return Response(data)
