"""URLs of the research API, mounted at /api/ (config/urls.py)."""

from django.urls import path, re_path

from evaluation.research.api import apis, docs
from evaluation.research.api.apis import clip_checks

app_name = "api"

urlpatterns = [
    path("", apis.ApiRootApi.as_view(), name="root"),
    path("languages/", apis.LanguageListApi.as_view(), name="language-list"),
    path("systems/", apis.SystemListApi.as_view(), name="system-list"),
    path("reference-sets/", apis.ReferenceSetListApi.as_view(), name="reference-set-list"),
    path("image-sets/", apis.ImageSetListApi.as_view(), name="image-set-list"),
    path("image-selections/", apis.ImageSelectionListApi.as_view(), name="image-selection-list"),
    path(
        "image-selections/<id:selection_id>/",
        apis.ImageSelectionDetailApi.as_view(),
        name="image-selection-detail",
    ),
    path("campaigns/", apis.CampaignListApi.as_view(), name="campaign-list"),
    path("campaigns/<id:campaign_id>/", apis.CampaignDetailApi.as_view(), name="campaign-detail"),
    path("captions/", apis.CaptionListApi.as_view(), name="caption-list"),
    path("captions/<id:caption_id>/", apis.CaptionDetailApi.as_view(), name="caption-detail"),
    path("judgments/", apis.JudgmentListApi.as_view(), name="judgment-list"),
    path("judgments/<id:judgment_id>/", apis.JudgmentDetailApi.as_view(), name="judgment-detail"),
    path("ratings/", apis.RatingListApi.as_view(), name="rating-list"),
    path("ratings/<id:rating_id>/", apis.RatingDetailApi.as_view(), name="rating-detail"),
    path("metric-runs/", apis.MetricRunCollectionApi.as_view(), name="metric-run-list"),
    path("metric-runs/<id:run_id>/", apis.MetricRunDetailApi.as_view(), name="metric-run-detail"),
    path(
        "metric-runs/<id:run_id>/caption-scores/",
        apis.CaptionScoreListApi.as_view(),
        name="metric-run-caption-scores",
    ),
    path("retrieval-checks/", apis.RetrievalCheckListApi.as_view(), name="retrieval-check-list"),
    path(
        "retrieval-checks/<id:check_id>/",
        apis.RetrievalCheckDetailApi.as_view(),
        name="retrieval-check-detail",
    ),
    path("clip-checks/", clip_checks.ClipCheckListApi.as_view(), name="clip-check-list"),
    path("clip-checks/<id:check_id>/", clip_checks.ClipCheckDetailApi.as_view(), name="clip-check-detail"),
    path(
        "clip-checks/<id:check_id>/against/<id:base_id>/",
        clip_checks.FoilBeforeAfterApi.as_view(),
        name="clip-check-before-after",
    ),
    path("clip-trust/", clip_checks.ClipTrustApi.as_view(), name="clip-trust"),
    re_path(
        r"^clip-trust/figure\.(?P<fmt>png|svg)$",
        clip_checks.ClipTrustFigureApi.as_view(),
        name="clip-trust-figure",
    ),
    path("clip-models/", apis.ClipModelListApi.as_view(), name="clip-model-list"),
    path("clip-models/<id:model_id>/", apis.ClipModelDetailApi.as_view(), name="clip-model-detail"),
    path("fine-tunes/", apis.ClipFineTuneListApi.as_view(), name="fine-tune-list"),
    path("fine-tunes/<id:run_id>/", apis.ClipFineTuneDetailApi.as_view(), name="fine-tune-detail"),
    path("correlations/", apis.CorrelationApi.as_view(), name="correlations"),
    path("trust/", apis.TrustApi.as_view(), name="trust"),
    path("schema/", docs.SchemaApi.as_view(), name="schema"),
    path("docs/", docs.DocsView.as_view(), name="docs"),
]
