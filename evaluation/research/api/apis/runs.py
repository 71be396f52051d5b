"""Metric runs (listed, started, read), their caption scores, CLIP models, fine-tunes and retrieval checks."""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.response import Response

from core.bounds import id_field
from core.tokenisation import SCHEME_NAMES
from evaluation.finetune.selectors import (
    clip_model_detail,
    clip_model_queryset,
    fine_tune_get,
    fine_tune_queryset,
)
from evaluation.metrics.clip import IMAGE_ORIENTATIONS
from evaluation.models import ALL_METRICS
from evaluation.research.api import filters, selectors
from evaluation.research.api.apis.base import (
    ERRORS,
    LIST_ERRORS,
    ResearchApi,
    ResearchListApi,
    detail_endpoint,
    list_endpoint,
)
from evaluation.research.api.serializers import (
    ClipFineTuneSerializer,
    ClipModelSerializer,
    MetricRunSerializer,
    RetrievalCheckSerializer,
    StrictInputSerializer,
)
from evaluation.retrieval.selectors import (
    retrieval_check_get,
    retrieval_check_queryset,
)
from evaluation.runs.plan import CIDER_DF_CHOICES, CIDER_DF_TEST, METRIC_GROUPS, metric_run_create

# --- Metric runs ------------------------------------------------------------------------------------


MetricRunListApi = list_endpoint(
    "MetricRunListApi",
    filters.MetricRunFilter,
    selectors.metric_run_list,
    MetricRunSerializer,
    summary="Metric runs with their corpus scores",
)


class MetricRunCreateApi(ResearchApi):
    """Researchers and project managers start runs (the only write of the API)."""

    class InputSerializer(StrictInputSerializer):
        name = serializers.CharField(
            required=False, allow_blank=True, max_length=200, default="", help_text="Empty: made up."
        )
        language = serializers.CharField(
            source="language_code", max_length=16, help_text="Language code, e.g. de."
        )
        systems = serializers.ListField(
            source="system_names",
            child=serializers.CharField(max_length=100),
            min_length=1,
            max_length=100,
            help_text="System names.",
        )
        reference_set = id_field(source="reference_set_id", help_text="Reference set id.")
        image_set = id_field(
            source="image_set_id",
            required=False,
            allow_null=True,
            default=None,
            help_text="Image set id; empty: every image with references and a caption.",
        )
        metrics = serializers.ListField(
            child=serializers.ChoiceField(choices=[*ALL_METRICS, *METRIC_GROUPS]),
            min_length=1,
            help_text="Metric names, or the groups text, clip, all.",
        )
        image_orientation = serializers.ChoiceField(
            choices=IMAGE_ORIENTATIONS,
            required=False,
            default=None,
            allow_null=True,
            help_text="CLIP metrics: exif (upright by the EXIF tag, as annotators see it) or stored (as the "
            "reference CLIPScore code reads the file). Empty: the CLIP_IMAGE_ORIENTATION setting. Recorded "
            "in the run's params.image_orientation.",
        )
        cider_df = serializers.ChoiceField(
            choices=list(CIDER_DF_CHOICES),
            required=False,
            default=CIDER_DF_TEST,
            help_text="CIDEr document frequencies: test (the scored images' references) or refset (every image "
            "of the reference set).",
        )
        scheme = serializers.ChoiceField(
            choices=list(SCHEME_NAMES),
            required=False,
            allow_null=True,
            default=None,
            help_text="Tokenisation scheme of the text metrics for this run; empty: the language's setting.",
        )
        clip_model = serializers.CharField(
            source="clip_model_name",
            required=False,
            allow_null=True,
            default=None,
            max_length=100,
            help_text="CLIP metrics: the name of a registered CLIP model (/api/clip-models/, e.g. a fine-tuned "
            "one); empty: the CLIP_* settings.",
        )

    @extend_schema(
        summary="Start a metric run",
        description=(
            "Validates, stores the run and its chunks and queues them for the workers. 503 when the job "
            "broker is unreachable (the run is stored as failed and can be resumed)."
        ),
        request=InputSerializer,
        responses={
            201: MetricRunSerializer,
            **ERRORS,
            404: OpenApiResponse(description="No such reference set, image set or registered CLIP model."),
            503: OpenApiResponse(description="The job broker is unreachable."),
        },
    )
    def post(self, request):
        # The input fields' sources are the service's parameters.
        run = metric_run_create(**self.validated(self.InputSerializer, request.data), user=request.user)
        run = selectors.metric_run_detail(run_id=run.pk)
        return Response(MetricRunSerializer(run).data, status=status.HTTP_201_CREATED)


class MetricRunCollectionApi(MetricRunListApi, MetricRunCreateApi):
    """GET and POST /metric-runs/: the two operations above on one URL."""


MetricRunDetailApi = detail_endpoint(
    "MetricRunDetailApi", selectors.metric_run_detail, MetricRunSerializer, summary="A metric run"
)
ClipModelListApi = list_endpoint(
    "ClipModelListApi",
    filters.ClipModelFilter,
    clip_model_queryset,
    ClipModelSerializer,
    summary="Registered CLIP models (fine-tuned ones with their provenance)",
)
ClipModelDetailApi = detail_endpoint(
    "ClipModelDetailApi", clip_model_detail, ClipModelSerializer, summary="A registered CLIP model"
)
ClipFineTuneListApi = list_endpoint(
    "ClipFineTuneListApi",
    filters.ClipFineTuneFilter,
    fine_tune_queryset,
    ClipFineTuneSerializer,
    summary="CLIP fine-tuning runs: data, settings, progress, before/after per language",
)
ClipFineTuneDetailApi = detail_endpoint(
    "ClipFineTuneDetailApi", fine_tune_get, ClipFineTuneSerializer, summary="A CLIP fine-tuning run"
)
RetrievalCheckListApi = list_endpoint(
    "RetrievalCheckListApi",
    filters.RetrievalCheckFilter,
    retrieval_check_queryset,
    RetrievalCheckSerializer,
    summary="Retrieval checks of CLIP models: recalls and verdict per language",
)
RetrievalCheckDetailApi = detail_endpoint(
    "RetrievalCheckDetailApi", retrieval_check_get, RetrievalCheckSerializer, summary="A retrieval check"
)


class CaptionScoreListApi(ResearchListApi):
    filterset_class = filters.CaptionScoreFilter

    @extend_schema_serializer(component_name="CaptionScore")
    class OutputSerializer(serializers.Serializer):
        system = serializers.CharField(source="system.name")
        image = serializers.CharField(source="image.key")
        metric = serializers.CharField()
        value = serializers.FloatField()

    @extend_schema(
        summary="Per-caption scores of a metric run",
        responses={200: OutputSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request, run_id: int):
        run = selectors.metric_run_detail(run_id=run_id)
        scores = self.filtered(request, selectors.caption_score_list(run=run))
        return self.paginated(request, scores, self.OutputSerializer)
