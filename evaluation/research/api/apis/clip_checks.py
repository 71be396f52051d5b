"""Zero-shot and foil checks of CLIP models, a fine-tuned model's foils against its base's, and the
per-model CLIP trust table (retrieval, zero-shot, foils against English) with its figure."""

from __future__ import annotations

import django_filters
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from evaluation.clip_checks.selectors import foil_before_after, probe_check_get, probe_check_queryset
from evaluation.models import ClipProbe, ClipProbeCheck, RunStatus
from evaluation.research.api.apis.base import DETAIL_ERRORS, ERRORS, LIST_ERRORS, ResearchApi, ResearchListApi
from evaluation.research.api.filters import StrictFilterSet, clip_model_filter
from evaluation.research.api.serializers import StrictInputSerializer
from evaluation.research.clip_trust_tables import (
    clip_trust_tables,
    points_correlation,
    probe_check_data,
    zeroshot_retrieval_figure,
    zeroshot_retrieval_points,
)

FIGURE_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


class ClipCheckFilter(StrictFilterSet):
    probe = django_filters.ChoiceFilter(choices=ClipProbe.choices)
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    model = clip_model_filter()

    class Meta(StrictFilterSet.Meta):
        model = ClipProbeCheck


class ClipCheckSerializer(serializers.Serializer):
    def to_representation(self, instance):
        return probe_check_data(instance, pairs=self.context.get("pairs", False))


class ClipCheckListApi(ResearchListApi):
    filterset_class = ClipCheckFilter

    @extend_schema(
        summary="Zero-shot and foil checks of CLIP models: measures per language against English",
        operation_id="clip_checks_list",
        responses={200: OpenApiTypes.OBJECT, **LIST_ERRORS},
    )
    def get(self, request):
        return self.paginated(request, self.filtered(request, probe_check_queryset()), ClipCheckSerializer)


class ClipCheckDetailApi(ResearchApi):
    class FilterSerializer(StrictInputSerializer):
        pairs = serializers.BooleanField(default=False, help_text="Include each foil pair's two CLIPScores.")

    @extend_schema(
        summary="A zero-shot or foil check",
        parameters=[OpenApiParameter("pairs", bool, description="each foil pair's two CLIPScores")],
        responses={200: OpenApiTypes.OBJECT, **DETAIL_ERRORS},
    )
    def get(self, request, check_id: int):
        options = self.validated(self.FilterSerializer, request.query_params)
        check = probe_check_get(check_id=check_id)
        return Response(ClipCheckSerializer(check, context={"pairs": options["pairs"]}).data)


class FoilBeforeAfterApi(ResearchApi):
    @extend_schema(
        summary="A fine-tuned model's foil check against its base model's, on the same pairs",
        responses={200: OpenApiTypes.OBJECT, **DETAIL_ERRORS, 400: ERRORS[400]},
    )
    def get(self, request, check_id: int, base_id: int):
        return Response(foil_before_after(check_id=check_id, base_id=base_id))


class ModelsFilter(StrictInputSerializer):
    model_key = serializers.ListField(
        child=serializers.CharField(max_length=400),
        required=False,
        help_text="Only these models (``model_key`` as answered); repeat for several. Default: every checked model.",
    )


def _tables(view: ResearchApi, request) -> list:
    return clip_trust_tables(view.validated(ModelsFilter, request.query_params).get("model_key") or None)


class ClipTrustApi(ResearchApi):
    """Per model: each language's retrieval R@1, zero-shot top-1 and foil accuracy against English's
    on the same check, and the verdict; with the points of the figure and their correlation."""

    @extend_schema(
        summary="CLIP trust per model and language",
        parameters=[ModelsFilter],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request):
        tables = _tables(self, request)
        points = zeroshot_retrieval_points(tables)
        return Response(
            {
                "models": tables,
                "zeroshot_vs_retrieval": {"points": points, "pearson_r": points_correlation(points)},
            }
        )


class ClipTrustFigureApi(ResearchApi):
    @extend_schema(
        summary="Zero-shot top-1 against text→image R@1, one dot per language and model (PNG or SVG)",
        parameters=[ModelsFilter],
        responses={200: OpenApiTypes.BINARY, **ERRORS},
    )
    def get(self, request, fmt: str):
        tables = _tables(self, request)
        data = zeroshot_retrieval_figure(tables, fmt, title="CLIP: zero-shot vs retrieval by language")
        response = HttpResponse(data, content_type=FIGURE_TYPES[fmt])
        response["Content-Disposition"] = f'inline; filename="clip_zeroshot_vs_retrieval.{fmt}"'
        return response
