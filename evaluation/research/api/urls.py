"""URLs of the research API, mounted at /api/ (config/urls.py)."""

from django.urls import path, re_path

from evaluation.research.api import apis, docs
from evaluation.research.api.apis import clip_checks

app_name = "api"


def collection(prefix: str, name: str, list_api, detail_api=None, key: str = "") -> list:
    """``<prefix>/`` (URL name ``<name>-list``) and, with a detail, ``<prefix>/<id:key>/`` (``<name>-detail``)."""
    routes = [path(f"{prefix}/", list_api.as_view(), name=f"{name}-list")]
    if detail_api is not None:
        routes.append(path(f"{prefix}/<id:{key}>/", detail_api.as_view(), name=f"{name}-detail"))
    return routes


urlpatterns = [
    path("", apis.ApiRootApi.as_view(), name="root"),
    *collection("languages", "language", apis.LanguageListApi),
    *collection("systems", "system", apis.SystemListApi),
    *collection("reference-sets", "reference-set", apis.ReferenceSetListApi),
    *collection("image-sets", "image-set", apis.ImageSetListApi),
    *collection(
        "image-selections",
        "image-selection",
        apis.ImageSelectionListApi,
        apis.ImageSelectionDetailApi,
        "selection_id",
    ),
    *collection("campaigns", "campaign", apis.CampaignListApi, apis.CampaignDetailApi, "campaign_id"),
    *collection("captions", "caption", apis.CaptionListApi, apis.CaptionDetailApi, "caption_id"),
    *collection("judgments", "judgment", apis.JudgmentListApi, apis.JudgmentDetailApi, "judgment_id"),
    *collection("ratings", "rating", apis.RatingListApi, apis.RatingDetailApi, "rating_id"),
    *collection("metric-runs", "metric-run", apis.MetricRunCollectionApi, apis.MetricRunDetailApi, "run_id"),
    path(
        "metric-runs/<id:run_id>/caption-scores/",
        apis.CaptionScoreListApi.as_view(),
        name="metric-run-caption-scores",
    ),
    *collection(
        "retrieval-checks",
        "retrieval-check",
        apis.RetrievalCheckListApi,
        apis.RetrievalCheckDetailApi,
        "check_id",
    ),
    *collection("clip-models", "clip-model", apis.ClipModelListApi, apis.ClipModelDetailApi, "model_id"),
    *collection("fine-tunes", "fine-tune", apis.ClipFineTuneListApi, apis.ClipFineTuneDetailApi, "run_id"),
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
    path("correlations/", apis.CorrelationApi.as_view(), name="correlations"),
    path("trust/", apis.TrustApi.as_view(), name="trust"),
    path("schema/", docs.SchemaApi.as_view(), name="schema"),
    path("docs/", docs.DocsView.as_view(), name="docs"),
]
