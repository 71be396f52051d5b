"""The research API: one class per operation, each with its nested filter / input / output serializers.

Every endpoint is for researchers and project managers (``core.access.ResearchAccess``); lists are paginated
(``?page=``, ``PAGE_SIZE`` from the settings) and filtered by query parameters validated by the
endpoint's django-filter FilterSet (:mod:`.filters`; an unknown parameter is refused). Domain errors of the services become
responses in ``core.errors.api_exception_handler`` (a broker that is down: 503).
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication, TokenAuthentication
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotation.selectors import (
    campaigns_progress,
    image_selection_detail,
    image_selection_list,
    selection_points,
)
from core.access import ResearchAccess
from core.bounds import id_field
from core.errors import ValidationFailed
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
from evaluation.research.api.filters import ResearchFilterBackend, StrictFilterSet
from evaluation.research.api.serializers import (
    CampaignSerializer,
    ClipFineTuneSerializer,
    ClipModelSerializer,
    ComparisonFilterSerializer,
    CorrelationsSerializer,
    MetricRunSerializer,
    RatingSerializer,
    RetrievalCheckSerializer,
    StatisticsSerializer,
    StrictInputSerializer,
    SxsJudgmentSerializer,
    SxsResultsSerializer,
    TrustSerializer,
    VerificationSerializer,
    WrittenCaptionSerializer,
)
from evaluation.research.comparisons import ComparisonList, comparisons_from_db, metric_runs_for_report
from evaluation.research.meta_evaluation import (
    ACC23_LABEL,
    MIN_ITEMS,
    SIGNIFICANCE_LEVEL,
)
from evaluation.research.trust_tables import model_level, trust_build, trust_languages, trust_records
from evaluation.retrieval.selectors import (
    clip_trust_for_runs,
    retrieval_check_get,
    retrieval_check_queryset,
)
from evaluation.runs.plan import CIDER_DF_CHOICES, CIDER_DF_TEST, METRIC_GROUPS, metric_run_create

ERRORS = {
    400: OpenApiResponse(description="Invalid query parameters or body: `error`, `message`, `details`."),
    401: OpenApiResponse(description="No credentials: send `Authorization: Token <key>`."),
    403: OpenApiResponse(description="Not a researcher or project manager."),
}
NOT_FOUND = {404: OpenApiResponse(description="No such object.")}
DETAIL_ERRORS = {
    401: ERRORS[401],
    403: ERRORS[403],
    **NOT_FOUND,
}
LIST_ERRORS = {**ERRORS, 404: OpenApiResponse(description="No such page.")}


class ResearchApi(APIView):
    """Token first, so a request without credentials gets 401 with ``WWW-Authenticate: Token``."""

    authentication_classes = [TokenAuthentication, SessionAuthentication]
    permission_classes = [ResearchAccess]

    @staticmethod
    def validated(serializer_class, data) -> dict:
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


# (URL name, what it lists) of the root's index, in reading order.
API_INDEX = (
    ("api:language-list", "languages"),
    ("api:system-list", "captioning systems"),
    ("api:reference-set-list", "reference sets"),
    ("api:image-set-list", "image sets"),
    (
        "api:image-selection-list",
        "geographically diverse image selections with their per-language level table",
    ),
    ("api:campaign-list", "campaigns with their progress (a detail adds ΔS×S, agreement, controls)"),
    ("api:caption-list", "submitted captions"),
    ("api:judgment-list", "side-by-side judgments"),
    ("api:rating-list", "ratings"),
    ("api:metric-run-list", "metric runs (POST starts one)"),
    (
        "api:clip-model-list",
        "registered CLIP models metric runs can choose (fine-tuned ones with provenance)",
    ),
    ("api:fine-tune-list", "CLIP fine-tuning runs with their before/after table per language"),
    ("api:correlations", "correlation of metrics with ΔS×S (?runs=1,2)"),
    ("api:trust", "which metric to trust: acc23 per language with significance clusters (?runs=1,2)"),
    ("api:schema", "the OpenAPI schema"),
    ("api:docs", "browsable documentation"),
)


class ApiRootApi(ResearchApi):
    @extend_schema(exclude=True)
    def get(self, request):
        """What the API has, with absolute links: the answer at ``/api/`` instead of a 404."""
        return Response(
            {
                "endpoints": [
                    {"url": request.build_absolute_uri(reverse(name)), "what": what}
                    for name, what in API_INDEX
                ],
                "authentication": "Token (Authorization: Token <key>) or the signed-in session; "
                "researchers and project managers only.",
            }
        )


class ResearchListApi(ResearchApi):
    """A paginated list whose query parameters are its ``filterset_class`` (:mod:`.filters`)."""

    pagination_class = api_settings.DEFAULT_PAGINATION_CLASS
    filter_backends = [ResearchFilterBackend]
    filterset_class: type[StrictFilterSet]

    def get_queryset(self):
        """Only for the schema generator, which reads the model here to type the filters."""
        return self.filterset_class._meta.model._default_manager.none()

    def filtered(self, request, queryset):
        """``queryset`` narrowed by the validated query parameters (400 for a bad or unknown one)."""
        for backend in self.filter_backends:
            queryset = backend().filter_queryset(request, queryset, self)
        return queryset

    def page_of(self, request, queryset) -> tuple:
        paginator = self.pagination_class()
        return paginator, paginator.paginate_queryset(queryset, request, view=self)

    def paginated(self, request, queryset, serializer_class) -> Response:
        paginator, page = self.page_of(request, queryset)
        return paginator.get_paginated_response(serializer_class(page, many=True).data)


# --- Languages, systems, reference and image sets ---------------------------------------------------


class LanguageListApi(ResearchListApi):
    filterset_class = filters.LanguageFilter

    @extend_schema_serializer(component_name="Language")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        code = serializers.CharField()
        name = serializers.CharField()
        direction = serializers.CharField()
        tokenizer = serializers.CharField()

    @extend_schema(
        summary="Languages",
        responses={200: OutputSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        languages = self.filtered(request, selectors.language_list())
        return self.paginated(request, languages, self.OutputSerializer)


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


class ReferenceSetListApi(ResearchListApi):
    filterset_class = filters.ReferenceSetFilter

    @extend_schema_serializer(component_name="ReferenceSet")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        language = serializers.CharField(source="language.code")
        kind = serializers.CharField(help_text="campaign: the written captions of a caption campaign.")
        campaign = serializers.IntegerField(source="campaign_id", allow_null=True)
        source_name = serializers.CharField()
        source_format = serializers.CharField()
        source_sha256 = serializers.CharField()
        description = serializers.CharField()

    @extend_schema(
        summary="Reference sets (to start a metric run)",
        responses={200: OutputSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        sets = self.filtered(request, selectors.reference_set_list())
        return self.paginated(request, sets, self.OutputSerializer)


class ImageSetListApi(ResearchListApi):
    filterset_class = filters.ImageSetFilter

    @extend_schema_serializer(component_name="ImageSet")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        language = serializers.CharField(
            source="language.code", allow_null=True, default=None, help_text="null: every language."
        )
        n_images = serializers.IntegerField()
        seed = serializers.IntegerField(allow_null=True)
        description = serializers.CharField()

    @extend_schema(
        summary="Image sets (to start a metric run)",
        responses={200: OutputSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        sets = self.filtered(request, selectors.image_set_list())
        return self.paginated(request, sets, self.OutputSerializer)


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


class ImageSelectionListApi(ResearchListApi):
    filterset_class = filters.ImageSelectionFilter

    @extend_schema(
        summary="Image selections with their per-language level table",
        description="How many images each language took from its regions, countries, continents and anywhere "
        "(manage.py select_images, or Image selections in the admin).",
        responses={200: ImageSelectionSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        return self.paginated(
            request, self.filtered(request, image_selection_list()), ImageSelectionSerializer
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


# --- Campaigns ------------------------------------------------------------------------------------


class CampaignListApi(ResearchListApi):
    """Cheap on purpose: progress for the whole page in one query, no ΔS×S (see the detail)."""

    filterset_class = filters.CampaignFilter

    @extend_schema(
        summary="Campaigns with their progress",
        description="ΔS×S and the other results are on the detail endpoint only, to keep this page cheap.",
        responses={200: CampaignSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        campaigns = self.filtered(request, selectors.campaign_list())
        paginator, page = self.page_of(request, campaigns)
        progress = campaigns_progress(c.pk for c in page)
        for campaign in page:
            campaign.progress = progress[campaign.pk]
        return paginator.get_paginated_response(CampaignSerializer(page, many=True).data)


class CampaignDetailApi(ResearchApi):
    @extend_schema_serializer(component_name="CampaignDetail")
    class OutputSerializer(CampaignSerializer):
        sxs = SxsResultsSerializer(allow_null=True, help_text="Side by side: WINS, LOSSES, ΔS×S and more.")
        verification = VerificationSerializer(allow_null=True, help_text="Verification: Table 2 row, alpha.")
        statistics = StatisticsSerializer(allow_null=True, help_text="Caption campaign: Table 1 row.")

    @extend_schema(
        summary="A campaign with its progress and results",
        description=(
            "Side by side: WINS, LOSSES, ties, ΔS×S with its 95% bootstrap interval (10,000 resamples, "
            "seed 0), sign test, position bias, alpha, the identical pairs apart and the control pass rate "
            "per annotator (pseudonyms). Verification: its Table 2 row. Caption: its Table 1 row."
        ),
        responses={200: OutputSerializer, **DETAIL_ERRORS},
    )
    def get(self, request, campaign_id: int):
        campaign = selectors.campaign_detail(campaign_id=campaign_id)
        return Response(self.OutputSerializer(campaign).data)


# --- Submitted work: written captions, side-by-side judgments, ratings ------------------------------


class CaptionListApi(ResearchListApi):
    filterset_class = filters.WrittenCaptionFilter

    @extend_schema(
        summary="Written captions (submitted)",
        description="Captions annotators wrote and submitted. Drafts are never exposed.",
        responses={200: WrittenCaptionSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        captions = self.filtered(request, selectors.written_caption_list())
        return self.paginated(request, captions, WrittenCaptionSerializer)


class CaptionDetailApi(ResearchApi):
    @extend_schema(summary="A written caption", responses={200: WrittenCaptionSerializer, **DETAIL_ERRORS})
    def get(self, request, caption_id: int):
        caption = selectors.written_caption_get(caption_id=caption_id)
        return Response(WrittenCaptionSerializer(caption).data)


class JudgmentListApi(ResearchListApi):
    filterset_class = filters.SxsJudgmentFilter

    @extend_schema(
        summary="Side-by-side judgments (submitted)",
        responses={200: SxsJudgmentSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        judgments = self.filtered(request, selectors.sxs_judgment_list())
        return self.paginated(request, judgments, SxsJudgmentSerializer)


class JudgmentDetailApi(ResearchApi):
    @extend_schema(summary="A side-by-side judgment", responses={200: SxsJudgmentSerializer, **DETAIL_ERRORS})
    def get(self, request, judgment_id: int):
        judgment = selectors.sxs_judgment_get(judgment_id=judgment_id)
        return Response(SxsJudgmentSerializer(judgment).data)


class RatingListApi(ResearchListApi):
    filterset_class = filters.RatingFilter

    @extend_schema(
        summary="Ratings (submitted): verification ratings and screen-1 ratings",
        responses={200: RatingSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        ratings = self.filtered(request, selectors.rating_list())
        return self.paginated(request, ratings, RatingSerializer)


class RatingDetailApi(ResearchApi):
    @extend_schema(summary="A rating", responses={200: RatingSerializer, **DETAIL_ERRORS})
    def get(self, request, rating_id: int):
        rating = selectors.rating_get(rating_id=rating_id)
        return Response(RatingSerializer(rating).data)


# --- Metric runs ------------------------------------------------------------------------------------


class MetricRunListApi(ResearchListApi):
    filterset_class = filters.MetricRunFilter

    @extend_schema(
        summary="Metric runs with their corpus scores",
        responses={200: MetricRunSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        runs = self.filtered(request, selectors.metric_run_list())
        return self.paginated(request, runs, MetricRunSerializer)


class MetricRunCreateApi(ResearchApi):
    """Researchers and project managers start runs (the only write of the API)."""

    class InputSerializer(StrictInputSerializer):
        name = serializers.CharField(
            required=False, allow_blank=True, max_length=200, default="", help_text="Empty: made up."
        )
        language = serializers.CharField(max_length=16, help_text="Language code, e.g. de.")
        systems = serializers.ListField(
            child=serializers.CharField(max_length=100),
            min_length=1,
            max_length=100,
            help_text="System names.",
        )
        reference_set = id_field(help_text="Reference set id.")
        image_set = id_field(
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
        data = self.validated(self.InputSerializer, request.data)
        run = metric_run_create(
            name=data["name"],
            language_code=data["language"],
            system_names=data["systems"],
            reference_set_id=data["reference_set"],
            image_set_id=data["image_set"],
            metrics=data["metrics"],
            image_orientation=data["image_orientation"],
            cider_df=data["cider_df"],
            scheme=data["scheme"],
            clip_model_name=data["clip_model"] or None,
            user=request.user,
        )
        run = selectors.metric_run_detail(run_id=run.pk)
        return Response(MetricRunSerializer(run).data, status=status.HTTP_201_CREATED)


class MetricRunCollectionApi(MetricRunListApi, MetricRunCreateApi):
    """GET and POST /metric-runs/: the two operations above on one URL."""


class MetricRunDetailApi(ResearchApi):
    @extend_schema(summary="A metric run", responses={200: MetricRunSerializer, **DETAIL_ERRORS})
    def get(self, request, run_id: int):
        return Response(MetricRunSerializer(selectors.metric_run_detail(run_id=run_id)).data)


class ClipModelListApi(ResearchListApi):
    filterset_class = filters.ClipModelFilter

    @extend_schema(
        summary="Registered CLIP models (fine-tuned ones with their provenance)",
        responses={200: ClipModelSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        return self.paginated(request, self.filtered(request, clip_model_queryset()), ClipModelSerializer)


class ClipModelDetailApi(ResearchApi):
    @extend_schema(summary="A registered CLIP model", responses={200: ClipModelSerializer, **DETAIL_ERRORS})
    def get(self, request, model_id: int):
        return Response(ClipModelSerializer(clip_model_detail(model_id=model_id)).data)


class ClipFineTuneListApi(ResearchListApi):
    filterset_class = filters.ClipFineTuneFilter

    @extend_schema(
        summary="CLIP fine-tuning runs: data, settings, progress, before/after per language",
        responses={200: ClipFineTuneSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        return self.paginated(request, self.filtered(request, fine_tune_queryset()), ClipFineTuneSerializer)


class ClipFineTuneDetailApi(ResearchApi):
    @extend_schema(summary="A CLIP fine-tuning run", responses={200: ClipFineTuneSerializer, **DETAIL_ERRORS})
    def get(self, request, run_id: int):
        return Response(ClipFineTuneSerializer(fine_tune_get(run_id=run_id)).data)


class RetrievalCheckListApi(ResearchListApi):
    filterset_class = filters.RetrievalCheckFilter

    @extend_schema(
        summary="Retrieval checks of CLIP models: recalls and verdict per language",
        responses={200: RetrievalCheckSerializer(many=True), **LIST_ERRORS},
    )
    def get(self, request):
        checks = self.filtered(request, retrieval_check_queryset())
        return self.paginated(request, checks, RetrievalCheckSerializer)


class RetrievalCheckDetailApi(ResearchApi):
    @extend_schema(summary="A retrieval check", responses={200: RetrievalCheckSerializer, **DETAIL_ERRORS})
    def get(self, request, check_id: int):
        return Response(RetrievalCheckSerializer(retrieval_check_get(check_id=check_id)).data)


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


# --- Correlation of metrics with side-by-side judgments ----------------------------------------------


def _system_level(
    found: ComparisonList, *, both_directions: bool, n_boot: int, n_permutations: int, seed: int
) -> dict:
    """:func:`correlate` of the comparisons with the soft pairwise accuracy from their items; 400 for
    comparisons that cannot be correlated."""
    try:
        return model_level(
            list(found),
            found.items,
            both_directions=both_directions,
            n_boot=n_boot,
            n_permutations=n_permutations,
            seed=seed,
        )
    except ValueError as exc:
        raise ValidationFailed(f"These comparisons cannot be correlated: {exc}.") from None


class CorrelationApi(ResearchApi):
    class FilterSerializer(ComparisonFilterSerializer):
        one_direction = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Count each comparison once instead of in both directions.",
        )

    @extend_schema(
        summary="Correlation of metrics with ΔS×S",
        description=(
            "One comparison per side-by-side campaign (m1, m2, language): ΔS×S from the campaign and, per "
            "metric, Δmetric = score(m2) − score(m1) from the corpus scores of one of the given runs in that "
            "language; when several runs score the same pair with a metric, the run given first is used and "
            "the others are listed in `skipped`. The same builder serves the report page and the `report` "
            "command. Pearson, Spearman, Kendall τ_b and τ_c per language and over all (`all`); each "
            "comparison counts in both directions unless `one_direction=true`. With them, the pairwise "
            "accuracy and, from the judgments and per-caption scores behind each comparison, the soft "
            "pairwise accuracy (WMT24)."
        ),
        parameters=[FilterSerializer],
        responses={200: CorrelationsSerializer, **ERRORS},
    )
    def get(self, request):
        params = self.validated(self.FilterSerializer, request.query_params)
        found = comparisons_from_db(metric_run_ids=params["runs"], campaign_ids=params.get("campaigns"))
        both = not params["one_direction"]
        draws = {key: params[key] for key in ("n_boot", "n_permutations", "seed")}
        output = {
            "both_directions": both,
            **draws,
            "comparisons": found.sources,
            "skipped": found.skipped,
            "results": _system_level(found, both_directions=both, **draws),
        }
        return Response(CorrelationsSerializer(output).data)


# --- Which metric to trust ---------------------------------------------------------------------------


NO_COMPARISON = (
    "No comparison in this selection: nothing judged yet, or no given run scores both systems of a "
    "campaign (see `skipped`)."
)
NO_ITEM = (
    "No item: the runs have no per-caption scores of both systems on the judged images (see `skipped`), "
    "and the table is made of them."
)


class TrustApi(ResearchApi):
    class FilterSerializer(ComparisonFilterSerializer):
        """No ``one_direction``: neither the item level nor the pairwise accuracies depend on it."""

    @extend_schema(
        summary="Which metric to trust, language by language",
        description=(
            "The comparisons of `/api/correlations/` (same selection), judged the way the WMT metrics task "
            "does. Item level: one item per judged image of a compared pair (people's mean score from m2's "
            "side against metric(m2's caption) − metric(m1's caption)); per metric and language (and `all`, "
            "every item pooled) acc23 with tie calibration, its 95% bootstrap interval over items and its "
            "significance cluster (paired permutation tests between metrics, as mt-metrics-eval's "
            "PermutationSigDiff and AssignRanks). Model level, in the same cells: pairwise accuracy and soft "
            "pairwise accuracy. A language with fewer than `min_items` items gets no test; one whose items "
            "cannot tell the metrics apart says so. Without an item (nothing judged, or no per-caption "
            "scores) the cells are empty and `note` says why."
        ),
        parameters=[FilterSerializer],
        responses={200: TrustSerializer, **ERRORS},
    )
    def get(self, request):
        params = self.validated(self.FilterSerializer, request.query_params)
        found = comparisons_from_db(metric_run_ids=params["runs"], campaign_ids=params.get("campaigns"))
        draws = {key: params[key] for key in ("n_boot", "n_permutations", "seed")}
        try:
            trust = trust_build(
                found.items,
                list(found),
                clip_trust=clip_trust_for_runs(metric_runs_for_report(params["runs"])),
                **draws,
            )
        except ValueError as exc:
            raise ValidationFailed(f"These comparisons cannot be judged: {exc}.") from None
        table = trust.table
        output = {
            "measure": ACC23_LABEL,
            **draws,
            "alpha": SIGNIFICANCE_LEVEL,
            "min_items": MIN_ITEMS,
            "metrics": list(table.metrics) if table else [],
            "languages": trust_languages(table) if table else {},
            "cells": trust_records(table, trust.system, trust.clip_flags) if table else [],
            "clip_flags": trust.clip_flags,
            "skipped": found.skipped,
            "note": "" if table else (NO_ITEM if len(found) else NO_COMPARISON),
        }
        return Response(TrustSerializer(output).data)
