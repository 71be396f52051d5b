"""The research API: one class per operation, each with its nested filter / input / output serializers.

Every endpoint is for researchers and project managers (``core.access.ResearchAccess``); lists are paginated
(``?page=``, ``PAGE_SIZE`` from the settings) and filtered by query parameters validated by the
endpoint's django-filter FilterSet (:mod:`..filters`; an unknown parameter is refused). Domain errors of the
services become responses in ``core.errors.api_exception_handler`` (a broker that is down: 503). One module
per resource: ``base`` (the API classes every endpoint extends, the root), ``catalogue`` (languages,
systems, reference and image sets, image selections), ``campaigns`` (campaigns and the submitted work),
``runs`` (metric runs, CLIP models, fine-tunes, retrieval checks, caption scores), ``correlations``
(correlations and the trust table).
"""

from evaluation.research.api.apis.base import (
    API_INDEX,
    DETAIL_ERRORS,
    ERRORS,
    LIST_ERRORS,
    NOT_FOUND,
    ApiRootApi,
    ResearchApi,
    ResearchListApi,
)
from evaluation.research.api.apis.campaigns import (
    CampaignDetailApi,
    CampaignListApi,
    CaptionDetailApi,
    CaptionListApi,
    JudgmentDetailApi,
    JudgmentListApi,
    RatingDetailApi,
    RatingListApi,
)
from evaluation.research.api.apis.catalogue import (
    ImageSelectionDetailApi,
    ImageSelectionListApi,
    ImageSelectionSerializer,
    ImageSetListApi,
    LanguageListApi,
    ReferenceSetListApi,
    SelectedImageSerializer,
    SelectionLanguageSerializer,
    SystemListApi,
)
from evaluation.research.api.apis.correlations import NO_COMPARISON, NO_ITEM, CorrelationApi, TrustApi
from evaluation.research.api.apis.runs import (
    CaptionScoreListApi,
    ClipFineTuneDetailApi,
    ClipFineTuneListApi,
    ClipModelDetailApi,
    ClipModelListApi,
    MetricRunCollectionApi,
    MetricRunCreateApi,
    MetricRunDetailApi,
    MetricRunListApi,
    RetrievalCheckDetailApi,
    RetrievalCheckListApi,
)

__all__ = [
    "API_INDEX",
    "ApiRootApi",
    "CampaignDetailApi",
    "CampaignListApi",
    "CaptionDetailApi",
    "CaptionListApi",
    "CaptionScoreListApi",
    "ClipFineTuneDetailApi",
    "ClipFineTuneListApi",
    "ClipModelDetailApi",
    "ClipModelListApi",
    "CorrelationApi",
    "DETAIL_ERRORS",
    "ERRORS",
    "ImageSelectionDetailApi",
    "ImageSelectionListApi",
    "ImageSelectionSerializer",
    "ImageSetListApi",
    "JudgmentDetailApi",
    "JudgmentListApi",
    "LIST_ERRORS",
    "LanguageListApi",
    "MetricRunCollectionApi",
    "MetricRunCreateApi",
    "MetricRunDetailApi",
    "MetricRunListApi",
    "NOT_FOUND",
    "NO_COMPARISON",
    "NO_ITEM",
    "RatingDetailApi",
    "RatingListApi",
    "ReferenceSetListApi",
    "ResearchApi",
    "ResearchListApi",
    "RetrievalCheckDetailApi",
    "RetrievalCheckListApi",
    "SelectedImageSerializer",
    "SelectionLanguageSerializer",
    "SystemListApi",
    "TrustApi",
]
